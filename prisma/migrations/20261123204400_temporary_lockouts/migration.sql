-- CreateTable
CREATE TABLE "temporary_lockouts" (
    "user_id" TEXT NOT NULL,
    "until" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "temporary_lockouts_pkey" PRIMARY KEY ("user_id")
);
