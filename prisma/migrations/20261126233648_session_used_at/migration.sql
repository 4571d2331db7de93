-- AlterTable
ALTER TABLE "login_sessions" ADD COLUMN     "used_at" TIMESTAMPTZ(6);
