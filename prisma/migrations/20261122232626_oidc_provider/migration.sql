-- CreateTable
CREATE TABLE "signing_keys" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "algorithm" TEXT NOT NULL,
    "private_key" TEXT NOT NULL,
    "public_jwk" JSONB NOT NULL,
    "use_until" TIMESTAMPTZ(6) NOT NULL,
    "publish_until" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "signing_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_requests" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "state" TEXT NOT NULL,
    "user_id" TEXT,
    "session_id" TEXT,
    "auth_time" TIMESTAMPTZ(6),
    "code_hash" TEXT,
    "issued" JSONB,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "auth_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "refresh_tokens" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "previous_hashes" TEXT[],
    "client_id" TEXT NOT NULL,
    "application_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "scopes" TEXT[],
    "audience" TEXT[],
    "session_id" TEXT,
    "auth_time" TIMESTAMPTZ(6) NOT NULL,
    "amr" TEXT[],
    "access_jti" TEXT NOT NULL,
    "access_expires" TIMESTAMPTZ(6) NOT NULL,
    "idle_expires_at" TIMESTAMPTZ(6) NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "revoked" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "refresh_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "revoked_tokens" (
    "jti" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "revoked_tokens_pkey" PRIMARY KEY ("jti")
);

-- CreateTable
CREATE TABLE "used_jwt_ids" (
    "key" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "used_jwt_ids_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "signing_keys_instance_id_created_at_idx" ON "signing_keys"("instance_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "auth_requests_code_hash_key" ON "auth_requests"("code_hash");

-- CreateIndex
CREATE INDEX "auth_requests_instance_id_idx" ON "auth_requests"("instance_id");

-- CreateIndex
CREATE UNIQUE INDEX "refresh_tokens_token_hash_key" ON "refresh_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "refresh_tokens_instance_id_user_id_idx" ON "refresh_tokens"("instance_id", "user_id");

-- CreateIndex
CREATE INDEX "refresh_tokens_previous_hashes_idx" ON "refresh_tokens" USING GIN ("previous_hashes");
