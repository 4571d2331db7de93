-- CreateTable
CREATE TABLE "org_domains" (
    "org_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "verified" BOOLEAN NOT NULL,
    "is_primary" BOOLEAN NOT NULL DEFAULT false,
    "generated" BOOLEAN NOT NULL DEFAULT false,
    "validation_type" TEXT NOT NULL DEFAULT '',
    "validation_token" TEXT NOT NULL DEFAULT '',
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "org_domains_pkey" PRIMARY KEY ("org_id","domain")
);

-- CreateIndex
CREATE INDEX "org_domains_instance_id_domain_idx" ON "org_domains"("instance_id", "domain");

-- Existing organisations: their generated domain, verified and primary (what the events of orgs added before
-- this table say; a replay of the log builds the same rows through the reducers).
INSERT INTO "org_domains" ("org_id", "instance_id", "domain", "verified", "is_primary", "generated", "sequence", "created_at", "change_date")
SELECT "id", "instance_id", "primary_domain", true, true, true, "sequence", "created_at", "change_date" FROM "orgs"
ON CONFLICT DO NOTHING;
