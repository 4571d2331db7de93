-- CreateIndex
CREATE INDEX "auth_requests_state_expires_at_idx" ON "auth_requests"("state", "expires_at");
