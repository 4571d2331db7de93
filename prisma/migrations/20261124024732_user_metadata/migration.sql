-- CreateTable
CREATE TABLE "user_metadata" (
    "user_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" BYTEA NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_metadata_pkey" PRIMARY KEY ("user_id","key")
);

-- CreateIndex
CREATE INDEX "user_metadata_org_id_idx" ON "user_metadata"("org_id");
