-- AlterTable
ALTER TABLE "user_grants" ADD COLUMN     "user_org_id" TEXT NOT NULL DEFAULT '';

-- CreateIndex
CREATE INDEX "user_grants_project_id_user_org_id_idx" ON "user_grants"("project_id", "user_org_id");

-- Existing grants: their user's organisation.
UPDATE "user_grants" g SET "user_org_id" = u."org_id" FROM "users" u WHERE u."id" = g."user_id" AND g."user_org_id" = '';
