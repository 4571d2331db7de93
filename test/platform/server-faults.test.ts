import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

describe("a fault on the server's side", () => {
  it("answers INTERNAL with a reference and no internal text, and the server goes on", async () => {
    // A database that fails under a handler: the table a search reads is gone for a moment.
    await t.server.db.execScript(`ALTER TABLE "targets" RENAME TO "targets_away"`);
    try {
      const res = await rest(t.url, "POST", "/resources/v3alpha/targets/_search", { token: t.adminPat, body: {} });
      expect(res.status).toBe(500);
      expect(res.body.code).toBe(Code.Internal);
      expect(res.body.message).toMatch(/^internal error, reference [0-9a-f-]{36} \(SRV-unx1\)$/);
      expect(JSON.stringify(res.body)).not.toMatch(/targets|relation|prisma/i);
    } finally {
      await t.server.db.execScript(`ALTER TABLE "targets_away" RENAME TO "targets"`);
    }
    expect((await rest(t.url, "POST", "/resources/v3alpha/targets/_search", { token: t.adminPat, body: {} })).status).toBe(200);
  });
});

describe("a fault on the server's side at the OAuth endpoints", () => {
  it("answers server_error with a reference and no internal text", async () => {
    await t.server.db.execScript(`ALTER TABLE "instance_domains" RENAME TO "instance_domains_away"`);
    try {
      // an unknown host is looked up in the database, which now fails
      const res = await rest(t.url, "GET", "/.well-known/openid-configuration", { host: "fault.example" });
      expect(res.status).toBe(500);
      const body = res.body;
      expect(body.error).toBe("server_error");
      expect(body.error_description).toMatch(/^internal error, reference [0-9a-f-]{36}$/);
      expect(JSON.stringify(body)).not.toMatch(/instance_domains|relation|prisma/i);
    } finally {
      await t.server.db.execScript(`ALTER TABLE "instance_domains_away" RENAME TO "instance_domains"`);
    }
  });
});
