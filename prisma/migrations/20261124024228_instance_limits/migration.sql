-- AlterTable
ALTER TABLE "instances" ADD COLUMN     "audit_log_retention_s" INTEGER,
ADD COLUMN     "blocked" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX IF NOT EXISTS "events_instance_id_position_idx" ON "events"("instance_id", "position");
