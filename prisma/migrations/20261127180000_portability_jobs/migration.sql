-- CreateTable
CREATE TABLE "portability_jobs" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "done" INTEGER NOT NULL DEFAULT 0,
    "total" INTEGER NOT NULL DEFAULT 0,
    "phase" TEXT NOT NULL DEFAULT '',
    "org_name" TEXT NOT NULL DEFAULT '',
    "objects" INTEGER NOT NULL DEFAULT 0,
    "creator" TEXT NOT NULL,
    "error" TEXT NOT NULL DEFAULT '',
    "issues" JSONB NOT NULL DEFAULT '[]',
    "data" TEXT,
    "data_size" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "portability_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "portability_jobs_instance_id_created_at_idx" ON "portability_jobs"("instance_id", "created_at");
