import { randomBytes, scryptSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { FormClient } from "./browser-form.js";

/**
 * Security review, finding 4 (ZITADEL GHSA-7h8m-vrxx-vr4m): a password check read the user, verified outside any
 * lock and returned its stale row, so a right guess among parallel wrong ones signed in after the others had
 * locked the account. A right password now signs in only if the user is still active, read under its lock
 * after the verification.
 */
describe("a sign-in decided on the user's state after the password was verified", () => {
  let t: TestServer;
  const PASSWORD = "Correct!horse9";
  /** An accepted scrypt hash that takes long enough to verify that the user can change meanwhile. */
  const slowHash = (() => {
    const salt = randomBytes(16);
    const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** 17, r: 8, p: 1, maxmem: 300 * 2 ** 20 });
    return `$scrypt$ln=17,r=8,p=1$${salt.toString("base64")}$${key.toString("base64")}`;
  })();
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  async function slowUser(username: string): Promise<string> {
    const r = await rest(t.url, "POST", "/resources/v3alpha/users", {
      token: t.adminPat,
      body: {
        username,
        human: { profile: { givenName: "Slow", familyName: "Hash" }, email: { address: `${username}@example.com` }, password: { hashedPassword: slowHash } },
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.details.id;
  }

  it("a right password whose user was locked while it was being verified does not sign in", async () => {
    const id = await slowUser("raced");
    const browser = new FormClient(t.url);
    await browser.request("GET", "/ui/login");
    const started = Date.now();
    const signIn = browser.signIn("raced", PASSWORD);
    // the lock lands while the slow hash is worked on (as the parallel guesses' lock did in the review)
    await new Promise((r) => setTimeout(r, 150));
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${id}/_lock`, { token: t.adminPat })).status).toBe(200);
    const lockedAfter = Date.now() - started;
    expect(await signIn).toBe(401);
    // the verification was still under way when the lock landed (else this test proves nothing)
    expect(Date.now() - started).toBeGreaterThan(lockedAfter);
  });

  it("parallel guesses with the right one among them: the account ends locked, and no session began after the lock", async () => {
    const patch = await rest(t.url, "PATCH", "/settings/v3alpha/lockout", { token: t.adminPat, body: { maxPasswordAttempts: { set: 3 } } });
    expect(patch.status).toBe(200);
    const id = await slowUser("dave");
    const guesses = Array.from({ length: 24 }, (_, i) => (i === 12 ? PASSWORD : `guess-${i}`));
    const statuses = await Promise.all(guesses.map((g) => new FormClient(t.url).signIn("dave", g)));
    const user = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect(user.state).toBe("locked");
    if (statuses[12] === 200) {
      // signed in: then fewer than 3 failures were counted before the right password's check
      const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: id }, orderBy: { sequence: "asc" } });
      const before = events.slice(
        0,
        events.findIndex((e) => e.type === "user.password.check_succeeded"),
      );
      expect(before.filter((e) => e.type === "user.password.check_failed").length).toBeLessThan(3);
      expect(before.some((e) => e.type === "user.user.locked")).toBe(false);
    }
  });
});
