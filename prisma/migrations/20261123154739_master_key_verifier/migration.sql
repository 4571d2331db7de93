-- CreateTable
CREATE TABLE "master_key_verifier" (
    "id" INTEGER NOT NULL,
    "sealed" TEXT NOT NULL,

    CONSTRAINT "master_key_verifier_pkey" PRIMARY KEY ("id")
);
