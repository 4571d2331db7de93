-- CreateTable
CREATE TABLE "projection_states" (
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "rebuilt_at" TIMESTAMPTZ(6) NOT NULL,
    "position" BIGINT NOT NULL,

    CONSTRAINT "projection_states_pkey" PRIMARY KEY ("name")
);
