-- AlterTable
ALTER TABLE "login_sessions" ADD COLUMN     "expires_at" TIMESTAMPTZ(6),
ADD COLUMN     "factors" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "token_hash" TEXT;

-- CreateIndex
CREATE INDEX "login_sessions_instance_id_created_at_id_idx" ON "login_sessions"("instance_id", "created_at", "id");
