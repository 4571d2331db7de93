-- CreateTable
CREATE TABLE "targets" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "timeout_ms" INTEGER NOT NULL,
    "is_async" BOOLEAN NOT NULL,
    "interrupt_on_error" BOOLEAN NOT NULL,
    "signing_key" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "targets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "executions" (
    "instance_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "condition_type" TEXT NOT NULL,
    "targets" TEXT[],
    "includes" TEXT[],
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "executions_pkey" PRIMARY KEY ("instance_id","id")
);

-- CreateIndex
CREATE INDEX "targets_instance_id_created_at_idx" ON "targets"("instance_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "targets_instance_id_name_key" ON "targets"("instance_id", "name");

-- CreateIndex
CREATE INDEX "executions_instance_id_condition_type_idx" ON "executions"("instance_id", "condition_type");
