-- CreateTable
CREATE TABLE "refresh_token_graces" (
    "refresh_token_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "presented_hash" TEXT NOT NULL,
    "successor_hash" TEXT NOT NULL,
    "response" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "refresh_token_graces_pkey" PRIMARY KEY ("refresh_token_id")
);

-- CreateIndex
CREATE INDEX "refresh_token_graces_instance_id_expires_at_idx" ON "refresh_token_graces"("instance_id", "expires_at");
