-- AlterTable
ALTER TABLE "instances" ADD COLUMN     "primary_domain" TEXT;

-- Existing instances: a domain that is a name (not an address), else any, as mail links chose before.
UPDATE "instances" SET "primary_domain" = (
  SELECT "domain" FROM "instance_domains" d WHERE d."instance_id" = "instances"."id" ORDER BY ("domain" ~ '[a-z]') DESC, "domain" LIMIT 1
) WHERE "primary_domain" IS NULL;
