-- AlterTable
ALTER TABLE "idp_intents" ADD COLUMN     "failure_url" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "result" TEXT,
ADD COLUMN     "success_url" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "token_hash" TEXT;
