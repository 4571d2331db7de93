-- AlterTable
ALTER TABLE "events" ADD COLUMN     "tx_id" xid8 NOT NULL DEFAULT pg_current_xact_id();

-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "tx_id" BIGINT NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "events_tx_id_position_idx" ON "events"("tx_id", "position");

-- The events already stored all carry this migration's transaction (the column's default above). A
-- subscription that had read up to position P resumes after (this transaction, P): it neither reads
-- those events again nor skips the ones after P.
UPDATE "subscriptions" SET "tx_id" = pg_current_xact_id()::text::bigint;
