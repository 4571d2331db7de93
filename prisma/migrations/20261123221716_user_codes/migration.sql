-- CreateTable
CREATE TABLE "user_codes" (
    "user_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "reason" TEXT NOT NULL DEFAULT '',
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_codes_pkey" PRIMARY KEY ("user_id","kind")
);

-- CreateIndex
CREATE INDEX "user_codes_org_id_idx" ON "user_codes"("org_id");
