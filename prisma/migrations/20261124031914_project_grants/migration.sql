-- CreateTable
CREATE TABLE "project_grants" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "granted_org_id" TEXT NOT NULL,
    "role_keys" TEXT[],
    "state" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "project_grants_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "project_grants_granted_org_id_idx" ON "project_grants"("granted_org_id");

-- CreateIndex
CREATE INDEX "project_grants_instance_id_created_at_id_idx" ON "project_grants"("instance_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "project_grants_project_id_granted_org_id_key" ON "project_grants"("project_id", "granted_org_id");
