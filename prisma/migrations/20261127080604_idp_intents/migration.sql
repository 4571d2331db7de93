-- CreateTable
CREATE TABLE "idp_intents" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "idp_id" TEXT NOT NULL,
    "state_hash" TEXT NOT NULL,
    "binding_hash" TEXT NOT NULL,
    "secrets" TEXT NOT NULL,
    "return_to" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "idp_intents_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "idp_intents_state_hash_key" ON "idp_intents"("state_hash");

-- CreateIndex
CREATE INDEX "idp_intents_expires_at_idx" ON "idp_intents"("expires_at");
