-- CreateTable
CREATE TABLE "login_sessions" (
    "id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL,
    "agent_hash" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "auth_time" TIMESTAMPTZ(6) NOT NULL,
    "sequence" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "change_date" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "login_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "login_sessions_user_id_idx" ON "login_sessions"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "login_sessions_agent_hash_user_id_key" ON "login_sessions"("agent_hash", "user_id");
