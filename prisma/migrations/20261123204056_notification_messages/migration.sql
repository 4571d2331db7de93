-- CreateTable
CREATE TABLE "notification_messages" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(6) NOT NULL,
    "last_error" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "sent_at" TIMESTAMPTZ(6),

    CONSTRAINT "notification_messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "notification_messages_status_next_attempt_at_idx" ON "notification_messages"("status", "next_attempt_at");
