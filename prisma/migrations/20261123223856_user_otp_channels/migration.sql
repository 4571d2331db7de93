-- CreateTable
CREATE TABLE "user_otp_channels" (
    "user_id" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,

    CONSTRAINT "user_otp_channels_pkey" PRIMARY KEY ("user_id","channel")
);

-- CreateIndex
CREATE INDEX "user_otp_channels_org_id_idx" ON "user_otp_channels"("org_id");
