-- CreateTable
CREATE TABLE "idps" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "owner_type" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" INTEGER NOT NULL,
    "owner_policy" TEXT NOT NULL,
    "options" JSONB NOT NULL,
    "client_id" TEXT NOT NULL,
    "scopes" TEXT[],
    "client_secret" TEXT,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "idps_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idp_policies" (
    "idp_id" TEXT NOT NULL,
    "context_type" TEXT NOT NULL,
    "context_id" TEXT NOT NULL,
    "policy" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "idp_policies_pkey" PRIMARY KEY ("idp_id","context_type","context_id")
);

-- CreateIndex
CREATE INDEX "idps_instance_id_owner_type_owner_id_idx" ON "idps"("instance_id", "owner_type", "owner_id");

-- CreateIndex
CREATE INDEX "idps_instance_id_name_idx" ON "idps"("instance_id", "name");
