import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { connectClient, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer, verifySignature } from "../support/targets.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

async function target(server: TestServer, url: string, name: string) {
  const res = await rest(server.url, "POST", "/resources/v3alpha/targets", { token: server.adminPat, body: { name, restWebhook: { url }, timeout: "2s" } });
  return { id: res.body.details.id as string, key: res.body.signingKey as string };
}
async function onEvent(server: TestServer, condition: object, targets: string[]) {
  const res = await rest(server.url, "POST", "/resources/v3alpha/executions", { token: server.adminPat, body: { condition: { event: condition }, targets } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

describe("event executions", () => {
  it("keep delivering to healthy targets while another target is down", async () => {
    const dead = await new TargetServer().start();
    const alive = await new TargetServer().start();
    try {
      const d = await target(t, dead.url, "ev-dead");
      const a = await target(t, alive.url, "ev-alive");
      await dead.stop();
      await onEvent(t, { event: "settings.feature.set" }, [d.id]);
      await onEvent(t, { event: "settings.language.set" }, [a.id]);
      const features = await rest(t.url, "PUT", "/v2/features/instance", { token: t.adminPat, body: { oidcTokenExchange: true } });
      expect(features.status).toBe(200);
      await connectClient(LanguageSettingsService, t.url, t.adminPat).setLanguages({ settings: { defaultLanguage: { key: "pl" } } });
      // the language event comes after the failing feature event, and is not held up by its retries
      await alive.waitFor(1, 3000);
      const pending = await t.server.db.prisma.eventDelivery.findMany();
      expect(pending.length).toBeGreaterThan(0);
      expect(pending[0]!.lastError).toContain("unreachable");
    } finally {
      await alive.stop();
      for (const id of ["event/settings.feature.set", "event/settings.language.set"]) {
        await rest(t.url, "DELETE", `/resources/v3alpha/executions/${encodeURIComponent(id)}`, { token: t.adminPat });
      }
    }
  });

  it("deliver committed events to the most specific execution, signed, with secrets left out", async () => {
    const typeR = await new TargetServer().start();
    const groupR = await new TargetServer().start();
    const allR = await new TargetServer().start();
    try {
      const a = await target(t, typeR.url, "ev-type");
      const b = await target(t, groupR.url, "ev-group");
      const c = await target(t, allR.url, "ev-all");
      await onEvent(t, { event: "settings.language.set" }, [a.id]);
      await onEvent(t, { group: "user" }, [b.id]);
      await onEvent(t, { all: true }, [c.id]);
      await connectClient(LanguageSettingsService, t.url, t.adminPat).setLanguages({ settings: { defaultLanguage: { key: "pt" } } });
      await t.serviceUser("event-user");
      const [lang] = await typeR.waitFor(1);
      expect(verifySignature(a.key, lang!.signature, lang!.raw)).toBe(true);
      expect(lang!.body).toMatchObject({
        instanceID: t.instanceId,
        type: "settings.language.set",
        aggregate: { type: "settings", id: `language/instance/${t.instanceId}` },
        sequence: expect.any(Number),
        created_at: expect.any(String),
        payload: { set: { default_language: "pt" } },
      });
      const user = await groupR.waitFor(2);
      expect(user.map((r) => r.body.type).sort()).toEqual(["user.machine.added", "user.pat.added"]);
      // the PAT's hash never leaves the server
      expect(JSON.stringify(user.map((r) => r.body))).not.toMatch(/tokenHash/);
      // "all" got the execution events, but neither the language nor the user events (more specific ones exist)
      await new Promise((r) => setTimeout(r, 300));
      const allTypes = allR.received.map((r) => r.body.type);
      expect(allTypes).toContain("action.execution.set");
      expect(allTypes).not.toContain("settings.language.set");
      expect(allTypes).not.toContain("user.machine.added");
    } finally {
      await Promise.all([typeR.stop(), groupR.stop(), allR.stop()]);
      for (const id of ["event/settings.language.set", "event/user.*", "event"]) {
        await rest(t.url, "DELETE", `/resources/v3alpha/executions/${encodeURIComponent(id)}`, { token: t.adminPat });
      }
    }
  });

  it("never hold up the API call, and retry until a target that was down comes back", async () => {
    const r = await new TargetServer(() => ({ delayMs: 1500 })).start();
    const x = await target(t, r.url, "ev-retry");
    await onEvent(t, { event: "settings.language.set" }, [x.id]);
    const lang = connectClient(LanguageSettingsService, t.url, t.adminPat);
    const t0 = Date.now();
    await lang.setLanguages({ settings: { defaultLanguage: { key: "ja" } } });
    expect(Date.now() - t0).toBeLessThan(1000);
    await r.waitFor(1);
    r.down();
    await lang.setLanguages({ settings: { defaultLanguage: { key: "ru" } } });
    await new Promise((ok) => setTimeout(ok, 700));
    r.received = [];
    r.behaviour = () => {};
    r.up();
    try {
      // both come back: "ja", whose call the target's shutdown cut off, and "ru", which happened while it was down
      const got = await r.waitFor(2, 15_000);
      expect(got.map((g) => g.body.payload.set.default_language).sort()).toEqual(["ja", "ru"]);
    } finally {
      await r.stop();
    }
  });

  it("are delivered after a restart of the server that was down when the event happened", async () => {
    const own = await startTestServer();
    const r = await new TargetServer().start();
    try {
      const x = await target(own, r.url, "ev-restart");
      await onEvent(own, { event: "settings.language.set" }, [x.id]);
      r.down(); // the target is down when the event happens
      await connectClient(LanguageSettingsService, own.url, own.adminPat).setLanguages({ settings: { defaultLanguage: { key: "zh" } } });
      await own.stop(); // and the server goes down before it could deliver
      expect(r.received.some((g) => g.body?.payload?.set?.default_language === "zh")).toBe(false);
      r.up();
      const again = await own.restart();
      try {
        const got = await r.waitFor(1, 15_000);
        expect(got.some((g) => g.body.payload?.set?.default_language === "zh")).toBe(true);
      } finally {
        await again.close();
      }
    } finally {
      await r.stop();
    }
  });
});
