-- AlterTable
ALTER TABLE "memberships" ADD COLUMN     "change_date" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "sequence" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "projects" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "project_role_assertion" BOOLEAN NOT NULL,
    "project_role_check" BOOLEAN NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "project_roles" (
    "project_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "group" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "project_roles_pkey" PRIMARY KEY ("project_id","key")
);

-- CreateTable
CREATE TABLE "applications" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "secret_hash" TEXT,
    "config" JSONB NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "applications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "application_keys" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "application_id" TEXT NOT NULL,
    "public_key" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "application_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_grants" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "role_keys" TEXT[],
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_grants_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "projects_instance_id_org_id_idx" ON "projects"("instance_id", "org_id");

-- CreateIndex
CREATE UNIQUE INDEX "projects_org_id_name_key" ON "projects"("org_id", "name");

-- CreateIndex
CREATE INDEX "applications_instance_id_org_id_idx" ON "applications"("instance_id", "org_id");

-- CreateIndex
CREATE UNIQUE INDEX "applications_project_id_name_key" ON "applications"("project_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "applications_instance_id_client_id_key" ON "applications"("instance_id", "client_id");

-- CreateIndex
CREATE INDEX "application_keys_application_id_idx" ON "application_keys"("application_id");

-- CreateIndex
CREATE INDEX "user_grants_project_id_idx" ON "user_grants"("project_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_grants_user_id_project_id_key" ON "user_grants"("user_id", "project_id");
