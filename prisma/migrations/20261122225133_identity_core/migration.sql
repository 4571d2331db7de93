-- DropIndex
DROP INDEX "users_instance_id_username_key";

-- AlterTable
ALTER TABLE "orgs" ADD COLUMN     "state" TEXT NOT NULL DEFAULT 'active';

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "access_token_type" TEXT NOT NULL DEFAULT 'opaque',
ADD COLUMN     "description" TEXT,
ADD COLUMN     "email_verified" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "family_name" TEXT,
ADD COLUMN     "given_name" TEXT,
ADD COLUMN     "login_name" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "nick_name" TEXT,
ADD COLUMN     "password_change_required" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "password_changed" TIMESTAMPTZ(6),
ADD COLUMN     "password_failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "phone" TEXT,
ADD COLUMN     "phone_verified" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "preferred_language" TEXT,
ADD COLUMN     "secret_hash" TEXT;

-- Existing users get their lower-cased username as login name (hand-written: the diff cannot know it).
UPDATE "users" SET "login_name" = lower("username");
ALTER TABLE "users" ALTER COLUMN "login_name" DROP DEFAULT;

-- CreateTable
CREATE TABLE "machine_keys" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "public_key" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "machine_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "machine_keys_user_id_idx" ON "machine_keys"("user_id");

-- CreateIndex
CREATE INDEX "users_instance_id_username_idx" ON "users"("instance_id", "username");

-- CreateIndex
CREATE UNIQUE INDEX "users_instance_id_login_name_key" ON "users"("instance_id", "login_name");
