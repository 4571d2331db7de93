-- CreateTable
CREATE TABLE "notification_providers" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "provider_type" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "secret" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "notification_providers_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "notification_providers_instance_id_kind_id_idx" ON "notification_providers"("instance_id", "kind", "id");

-- CreateIndex
CREATE INDEX "notification_providers_instance_id_kind_created_at_id_idx" ON "notification_providers"("instance_id", "kind", "created_at", "id");

-- CreateIndex
CREATE INDEX "notification_providers_instance_id_kind_change_date_id_idx" ON "notification_providers"("instance_id", "kind", "change_date", "id");

-- CreateIndex
CREATE INDEX "notification_providers_instance_id_kind_description_id_idx" ON "notification_providers"("instance_id", "kind", "description", "id");

-- CreateIndex
CREATE INDEX "notification_providers_instance_id_kind_active_idx" ON "notification_providers"("instance_id", "kind", "active");
