-- AlterTable
ALTER TABLE "users" ADD COLUMN     "otp_failures" INTEGER NOT NULL DEFAULT 0;
