-- AlterTable
ALTER TABLE "login_sessions" ADD COLUMN     "amr" TEXT[] DEFAULT ARRAY['pwd']::TEXT[];

-- CreateTable
CREATE TABLE "user_totps" (
    "user_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "verified" BOOLEAN NOT NULL DEFAULT false,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_totps_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "user_mfa_init_skips" (
    "user_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "skipped_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_mfa_init_skips_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE INDEX "user_totps_org_id_idx" ON "user_totps"("org_id");

-- CreateIndex
CREATE INDEX "user_mfa_init_skips_org_id_idx" ON "user_mfa_init_skips"("org_id");
