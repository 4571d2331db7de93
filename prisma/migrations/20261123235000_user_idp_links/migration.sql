-- CreateTable
CREATE TABLE "user_idp_links" (
    "user_id" TEXT NOT NULL,
    "idp_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "external_user_id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_idp_links_pkey" PRIMARY KEY ("user_id","idp_id")
);

-- CreateIndex
CREATE INDEX "user_idp_links_org_id_idx" ON "user_idp_links"("org_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_idp_links_idp_id_external_user_id_key" ON "user_idp_links"("idp_id", "external_user_id");
