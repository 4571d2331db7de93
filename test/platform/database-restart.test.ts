import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { LanguageSettingsService, SetLanguageSettingsRequestSchema } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { type PrivatePostgres, startPrivatePostgres, ownPostgresRunsHere } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * PostgreSQL restarted under a running server (DATABASE_URL; issue 32, point 2): while it is down every call is
 * answered UNAVAILABLE (503, gRPC 14), never INTERNAL, and `/readyz` says so; once it is back, the server works
 * again by itself: the pool's new connections, the LISTEN connection, a write and a read.
 */
let pg: PrivatePostgres;
let t: TestServer;

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  pg = await startPrivatePostgres();
  t = await startTestServer({ DATABASE_URL: pg.url, SVC_MASTERKEY: TEST_MASTERKEY });
}, 60_000);
afterAll(async () => {
  await t?.close().catch(() => {});
  pg?.remove();
});

const languages = (method: "GET" | "PATCH", body?: object) =>
  rest(t.url, method, "/settings/v3alpha/languages", { token: t.adminPat, ...(body ? { body } : {}) });

describe.skipIf(!ownPostgresRunsHere)("a PostgreSQL restart under a running server", () => {
  it("answers UNAVAILABLE while the database is down, and works again once it is back", async () => {
    expect((await languages("PATCH", { defaultLanguage: { key: "de" } })).status).toBe(200);
    pg.stop();
    try {
      const write = await languages("PATCH", { defaultLanguage: { key: "fr" } });
      expect(write.status, JSON.stringify(write.body)).toBe(503);
      expect(write.body).toMatchObject({ code: Code.Unavailable, message: expect.stringContaining("the database") });
      const ready = await fetch(`${t.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: "unavailable", notifications: "reconnecting" });
      const request = create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key: "fr" } } });
      await expectCode(
        call("grpc", t.url, LanguageSettingsService, LanguageSettingsService.method.setLanguages, request, { token: t.adminPat }),
        Code.Unavailable,
      );
      const token = await fetch(`${t.url}/oauth/v2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&client_id=nobody&client_secret=x",
      });
      expect(token.status).toBe(503);
    } finally {
      pg.start();
    }
    const started = Date.now();
    let status = 0;
    while (Date.now() - started < 10_000) {
      status = (await languages("PATCH", { defaultLanguage: { key: "it" } })).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    // ready at once; the LISTEN connection back within its back-off (at most 5 s)
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
    await until("notifications heard again", async () => (await (await fetch(`${t.url}/readyz`)).json()).notifications === undefined || undefined, 10_000);
  }, 60_000);
});
