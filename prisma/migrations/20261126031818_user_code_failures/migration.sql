-- AlterTable
ALTER TABLE "user_codes" ADD COLUMN     "failures" INTEGER NOT NULL DEFAULT 0;
