-- Every provider kind (issue 28): the kind's configuration as proto JSON and its one secret, instead of the
-- GitLab kind's columns. Rows already there keep their values (what replaying their events gives too).
ALTER TABLE "idps" ADD COLUMN "config" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN "secret" TEXT;
UPDATE "idps" SET "config" = jsonb_build_object('clientId', "client_id", 'scopes', to_jsonb("scopes")), "secret" = "client_secret";
ALTER TABLE "idps" ALTER COLUMN "config" DROP DEFAULT,
DROP COLUMN "client_id",
DROP COLUMN "client_secret",
DROP COLUMN "scopes";
