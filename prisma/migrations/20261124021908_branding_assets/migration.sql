-- CreateTable
CREATE TABLE "branding_assets" (
    "instance_id" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "data" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "branding_assets_pkey" PRIMARY KEY ("instance_id","sha256")
);
