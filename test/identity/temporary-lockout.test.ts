import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman } from "../oidc/rp.js";

const PASSWORD = "Correct!horse9";

describe("temporary lockout (lockout settings' lockout_duration)", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  async function attempt(loginName: string, password: string) {
    const page = await rest(t.url, "GET", "/ui/login");
    const cookie = String(page.headers["set-cookie"]).split(";")[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body as string)![1]!;
    const r = await rest(t.url, "POST", "/ui/login/password", {
      body: new URLSearchParams({ loginName, password, csrf }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    });
    return r.status;
  }
  const state = async (id: string) => (await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } })).state;

  it("is a setting beside the attempts, 0 (permanent) by default", async () => {
    const before = await rest(t.url, "GET", "/settings/v3alpha/lockout", { token: t.adminPat });
    expect(before.body.settings.lockoutDuration).toEqual({ value: "0s", owner: { type: "OWNER_TYPE_SYSTEM", id: "" } });
    const bad = await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { lockoutDuration: { set: `${366 * 86400}s` } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/lockout_duration/);
  });

  it("locks at the limit for the duration, then the right password works again and the count starts over", async () => {
    const r = await rest(t.url, "PATCH", "/settings/v3alpha/lockout", {
      token: t.adminPat,
      body: { maxPasswordAttempts: { set: 2 }, lockoutDuration: { set: "2s" } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = await addHuman(t, "tempo", PASSWORD);
    expect(await attempt("tempo", "wrong-1")).toBe(401);
    expect(await attempt("tempo", "wrong-2")).toBe(401);
    expect(await state(id)).toBe("locked");
    const lock = await t.server.db.prisma.event.findFirstOrThrow({ where: { aggregateId: id, type: "user.user.locked" } });
    expect((lock.payload as { until?: string }).until).toBeDefined();
    // locked: even the right password is refused, with the same answer
    expect(await attempt("tempo", PASSWORD)).toBe(401);
    await new Promise((ok) => setTimeout(ok, 2200));
    expect(await attempt("tempo", PASSWORD)).toBe(200);
    expect(await state(id)).toBe("active");
    const unlocked = await t.server.db.prisma.event.findFirstOrThrow({ where: { aggregateId: id, type: "user.user.unlocked" } });
    expect(unlocked.creator).toBe("SYSTEM:lockout-expired");
    // the failures were cleared with the lock: one more wrong password does not lock again
    expect(await attempt("tempo", "wrong-3")).toBe(401);
    expect(await state(id)).toBe("active");
  });

  it("an expired lock with a wrong password counts as the first failure after it", async () => {
    const id = await addHuman(t, "tempo2", PASSWORD);
    expect(await attempt("tempo2", "wrong-1")).toBe(401);
    expect(await attempt("tempo2", "wrong-2")).toBe(401);
    expect(await state(id)).toBe("locked");
    await new Promise((ok) => setTimeout(ok, 2200));
    expect(await attempt("tempo2", "wrong-3")).toBe(401);
    expect(await state(id)).toBe("active");
    expect((await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } })).passwordFailures).toBe(1);
  });

  it("with the duration reset to 0 a lock lasts until an administrator unlocks", async () => {
    const r = await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { lockoutDuration: { reset: true } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = await addHuman(t, "forever", PASSWORD);
    expect(await attempt("forever", "wrong-1")).toBe(401);
    expect(await attempt("forever", "wrong-2")).toBe(401);
    await new Promise((ok) => setTimeout(ok, 1200));
    expect(await attempt("forever", PASSWORD)).toBe(401);
    expect(await state(id)).toBe("locked");
    expect(await t.server.db.prisma.temporaryLockout.findUnique({ where: { userId: id } })).toBeNull();
  });
});
