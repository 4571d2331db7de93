-- CreateTable
CREATE TABLE "event_deliveries" (
    "position" BIGINT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(6) NOT NULL,
    "last_error" TEXT NOT NULL,

    CONSTRAINT "event_deliveries_pkey" PRIMARY KEY ("position")
);

-- CreateIndex
CREATE INDEX "event_deliveries_next_attempt_at_idx" ON "event_deliveries"("next_attempt_at");
