-- CreateTable
CREATE TABLE "user_webauthn_keys" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "credential_id" TEXT NOT NULL,
    "public_key" TEXT NOT NULL,
    "counter" BIGINT NOT NULL,
    "transports" TEXT[],
    "name" TEXT NOT NULL,
    "passwordless" BOOLEAN NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_webauthn_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "user_webauthn_keys_user_id_idx" ON "user_webauthn_keys"("user_id");

-- CreateIndex
CREATE INDEX "user_webauthn_keys_org_id_idx" ON "user_webauthn_keys"("org_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_webauthn_keys_instance_id_credential_id_key" ON "user_webauthn_keys"("instance_id", "credential_id");
