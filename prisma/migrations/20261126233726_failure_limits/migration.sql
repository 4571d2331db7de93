-- CreateTable
CREATE TABLE "failure_limits" (
    "key" TEXT NOT NULL,
    "tat" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "failure_limits_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "failure_limits_tat_idx" ON "failure_limits"("tat");
