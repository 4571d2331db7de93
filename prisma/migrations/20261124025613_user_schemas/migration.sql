-- AlterTable
ALTER TABLE "users" ADD COLUMN     "data" JSONB,
ADD COLUMN     "schema_id" TEXT,
ADD COLUMN     "schema_revision" INTEGER;

-- CreateTable
CREATE TABLE "user_schemas" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "schema" JSONB NOT NULL,
    "possible_authenticators" TEXT[],
    "state" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_schemas_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "user_schemas_instance_id_created_at_id_idx" ON "user_schemas"("instance_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "user_schemas_instance_id_type_key" ON "user_schemas"("instance_id", "type");
