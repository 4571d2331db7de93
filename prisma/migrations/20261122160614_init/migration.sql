-- CreateTable
CREATE TABLE "events" (
    "position" BIGSERIAL NOT NULL,
    "instance_id" TEXT NOT NULL,
    "aggregate_type" TEXT NOT NULL,
    "aggregate_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "creator" TEXT NOT NULL,
    "resource_owner" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("position")
);

-- CreateTable
CREATE TABLE "subscriptions" (
    "name" TEXT NOT NULL,
    "position" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "instances" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "default_org_id" TEXT,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "instances_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "instance_domains" (
    "domain" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,

    CONSTRAINT "instance_domains_pkey" PRIMARY KEY ("domain")
);

-- CreateTable
CREATE TABLE "orgs" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "primary_domain" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "orgs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "email" TEXT,
    "password_hash" TEXT,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "memberships" (
    "instance_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "context_type" TEXT NOT NULL,
    "context_id" TEXT NOT NULL,
    "roles" TEXT[],

    CONSTRAINT "memberships_pkey" PRIMARY KEY ("user_id","context_type","context_id")
);

-- CreateTable
CREATE TABLE "personal_access_tokens" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "personal_access_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "settings" (
    "kind" TEXT NOT NULL,
    "owner_type" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "values" JSONB NOT NULL,
    "sequence" INTEGER NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "settings_pkey" PRIMARY KEY ("kind","owner_type","owner_id")
);

-- CreateIndex
CREATE INDEX "events_type_position_idx" ON "events"("type", "position");

-- CreateIndex
CREATE UNIQUE INDEX "events_instance_id_aggregate_type_aggregate_id_sequence_key" ON "events"("instance_id", "aggregate_type", "aggregate_id", "sequence");

-- CreateIndex
CREATE INDEX "instance_domains_instance_id_idx" ON "instance_domains"("instance_id");

-- CreateIndex
CREATE UNIQUE INDEX "orgs_instance_id_name_key" ON "orgs"("instance_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "orgs_instance_id_primary_domain_key" ON "orgs"("instance_id", "primary_domain");

-- CreateIndex
CREATE INDEX "users_instance_id_org_id_idx" ON "users"("instance_id", "org_id");

-- CreateIndex
CREATE UNIQUE INDEX "users_instance_id_username_key" ON "users"("instance_id", "username");

-- CreateIndex
CREATE INDEX "memberships_instance_id_idx" ON "memberships"("instance_id");

-- CreateIndex
CREATE UNIQUE INDEX "personal_access_tokens_token_hash_key" ON "personal_access_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "personal_access_tokens_user_id_idx" ON "personal_access_tokens"("user_id");
