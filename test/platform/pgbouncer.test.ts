import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LanguageSettingsService,
  ResolveLanguageSettingsRequestSchema,
  SetLanguageSettingsRequestSchema,
} from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { call, protocols, rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { type PgBouncer, startPgBouncer } from "../support/pgbouncer.js";
import { type PrivatePostgres, startPrivatePostgres, ownPostgresRunsHere } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer, webhookOnEvent } from "../support/targets.js";

/**
 * Behind PgBouncer in transaction mode (issue 32, point 3): DATABASE_URL at the pooler, SVC_DATABASE_DIRECT_URL at
 * the server for what needs a session of its own (LISTEN, the set-up lock). Without it the start is refused
 * before anything is locked: LISTEN through the pooler hears nothing.
 */
let pg: PrivatePostgres;
let bouncer: PgBouncer;
let receiver: TargetServer;
const servers: TestServer[] = [];

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  pg = await startPrivatePostgres();
  bouncer = await startPgBouncer(pg.port);
  receiver = await new TargetServer().start();
}, 60_000);
afterAll(async () => {
  for (const s of servers) await s.close().catch(() => {});
  await receiver?.stop();
  await bouncer?.stop();
  pg?.remove();
});

const env = () => ({ DATABASE_URL: bouncer.url("postgres"), SVC_MASTERKEY: TEST_MASTERKEY, SVC_TARGET_DENY: "none" });

describe.skipIf(!ownPostgresRunsHere)("behind PgBouncer in transaction mode", () => {
  it("refuses to start without SVC_DATABASE_DIRECT_URL, naming it", async () => {
    await expect(startTestServer(env())).rejects.toThrow(/SVC_DATABASE_DIRECT_URL/);
  });

  it("serves every protocol through the pooler, and two servers hear each other's writes and deliver each event once", async () => {
    // B reads the PAT the first start (A's) wrote
    const direct = { SVC_DATABASE_DIRECT_URL: pg.url, SVC_FIRSTINSTANCE_PAT_PATH: join(pg.dataDir, "..", "admin.pat") };
    const a = await startTestServer({ ...env(), ...direct });
    servers.push(a);
    const b = await startTestServer({ ...env(), ...direct });
    servers.push(b);
    for (const [i, protocol] of protocols.entries()) {
      const key = ["de", "fr", "it", "es"][i]!;
      // B has the settings cached; A's write reaches it through the NOTIFY on the direct connection
      const resolve = create(ResolveLanguageSettingsRequestSchema, {});
      await call(protocol, b.url, LanguageSettingsService, LanguageSettingsService.method.resolveLanguages, resolve, { token: b.adminPat });
      const set = create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key } } });
      await call(protocol, a.url, LanguageSettingsService, LanguageSettingsService.method.setLanguages, set, { token: a.adminPat });
      await until(
        `${protocol}: B reads ${key}`,
        async () => {
          const got = await call(protocol, b.url, LanguageSettingsService, LanguageSettingsService.method.resolveLanguages, resolve, { token: b.adminPat });
          return got.settings?.defaultLanguage?.value === key || undefined;
        },
        5_000,
      );
    }

    await webhookOnEvent(a.url, a.adminPat, "org.org.added", receiver.url, "bounced");
    const names = Array.from({ length: 10 }, (_, i) => `bounced-${i}`);
    for (const [i, name] of names.entries()) {
      const s = i % 2 ? a : b;
      const r = await rest(s.url, "POST", "/resources/v3alpha/organizations", { token: s.adminPat, body: { name } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    await receiver.waitFor(names.length, 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.map((r) => r.body?.payload?.name).sort()).toEqual([...names].sort());
    const found = await rest(b.url, "POST", "/resources/v3alpha/organizations/_search", {
      token: b.adminPat,
      body: { filters: [{ name: { name: "bounced-", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] },
    });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.result).toHaveLength(names.length);
  }, 120_000);
});
