import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/command/rate-limits.js";
import { runningEmbeddedUrl } from "../../src/command/recover.js";
import { loadConfig } from "../../src/config/config.js";
import { parseRateRule } from "../../src/domain/rate-rules.js";
import type { Database } from "../../src/storage/database.js";
import { startCli, type RunningCli } from "../support/cli.js";
import { rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The limits' windows in these tests: the longest a rule takes (116 days). Windows are aligned on the epoch,
 * so with an hour a test running across the top of an hour would see its count start again.
 */
const WINDOW_S = 9_999_999;

const form = { "content-type": "application/x-www-form-urlencoded" };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/** A token request with a wrong secret (the client may not even exist): 401 within the limit, 429 beyond it. */
const tokenWith = (url: string, client: string, path = "/oauth/v2/token") =>
  rest(url, "POST", path, {
    body: path === "/oauth/v2/token" ? "grant_type=client_credentials&scope=openid" : "token=abc",
    headers: { ...form, authorization: basic(client, "wrong secret") },
  });

function expect429(r: { status: number; headers: Record<string, unknown>; body: any }, windowS: number) {
  expect(r.status).toBe(429);
  const after = Number(r.headers["retry-after"]);
  expect(after).toBeGreaterThanOrEqual(1);
  expect(after).toBeLessThanOrEqual(windowS);
  expect(r.body.error).toBe("temporarily_unavailable");
}

describe("rate limit rules", () => {
  it("reads <requests>/<seconds> and off, and refuses anything else naming the variable", () => {
    expect(parseRateRule("5/60")).toEqual({ limit: 5, windowS: 60 });
    expect(parseRateRule("off")).toBeUndefined();
    expect(() => loadConfig({ SVC_RATE_LIMIT_OAUTH_CLIENT: "5 per minute" }, [])).toThrow(/SVC_RATE_LIMIT_OAUTH_CLIENT must be <requests>\/<seconds>/);
    expect(() => loadConfig({ SVC_RATE_LIMIT_LOGIN_ADDRESS: "0/60" }, [])).toThrow(/SVC_RATE_LIMIT_LOGIN_ADDRESS/);
    // all-request limits are off by default: the failure limits guard against guessing (test/security/failure-limits.test.ts)
    expect(loadConfig({}, []).rateLimits).toEqual({ oauthClient: undefined, oauthAddress: undefined, loginAddress: undefined });
    expect(loadConfig({ SVC_RATE_LIMIT_OAUTH_CLIENT: "100/60" }, []).rateLimits.oauthClient).toEqual({ limit: 100, windowS: 60 });
  });
});

/** The database with its statements counted, and a first `failures` statements that fail. */
function countingDb(real: Database, failures = 0) {
  let n = 0;
  const query = (...args: Parameters<Database["pool"]["query"]>) => {
    n++;
    if (n <= failures) return Promise.reject(new Error("connection lost"));
    return real.pool.query(...args);
  };
  return { db: { pool: { query } } as unknown as Database, statements: () => n };
}

/** The stored count of a key's window. */
async function storedHits(db: Database, key: string): Promise<number | undefined> {
  const { rows } = await db.pool.query<{ hits: number }>("SELECT hits FROM rate_limit_counts WHERE key = $1", [key]);
  return rows[0]?.hits;
}

describe("rate limits at the OAuth endpoints and the login forms", () => {
  let perClient: TestServer;
  let perAddress: TestServer;
  beforeAll(async () => {
    [perClient, perAddress] = await Promise.all([
      startTestServer({ SVC_RATE_LIMIT_OAUTH_CLIENT: `5/${WINDOW_S}` }),
      startTestServer({ SVC_RATE_LIMIT_OAUTH_ADDRESS: `6/${WINDOW_S}`, SVC_RATE_LIMIT_LOGIN_ADDRESS: `3/${WINDOW_S}` }),
    ]);
  });
  afterAll(() => Promise.all([perClient?.close(), perAddress?.close()]));

  it("answers 429 with Retry-After per client, across token, introspection and revocation, and other clients go on", async () => {
    for (let i = 0; i < 5; i++) expect((await tokenWith(perClient.url, "client-a")).status).toBe(401);
    expect429(await tokenWith(perClient.url, "client-a"), WINDOW_S);
    expect429(await tokenWith(perClient.url, "client-a", "/oauth/v2/introspect"), WINDOW_S);
    expect429(await tokenWith(perClient.url, "client-a", "/oauth/v2/revoke"), WINDOW_S);
    // client_id in the body counts for the same client
    const inBody = await rest(perClient.url, "POST", "/oauth/v2/token", {
      body: "grant_type=client_credentials&client_id=client-a&client_secret=x",
      headers: form,
    });
    expect429(inBody, WINDOW_S);
    // another client is not limited by client-a's count
    expect((await tokenWith(perClient.url, "client-b")).status).toBe(401);
  });

  it("answers 429 with Retry-After per address, whatever client is named", async () => {
    for (let i = 0; i < 6; i++) expect((await tokenWith(perAddress.url, `client-${i}`)).status).toBe(401);
    expect429(await tokenWith(perAddress.url, "client-new"), WINDOW_S);
    expect429(await tokenWith(perAddress.url, "client-new", "/oauth/v2/introspect"), WINDOW_S);
  });

  it("limits the login forms per address with a 429 page and Retry-After", async () => {
    const page = await rest(perAddress.url, "GET", "/ui/login");
    const cookie = String(page.headers["set-cookie"]).split(";")[0]!;
    const csrf = (page.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
    const post = () =>
      rest(perAddress.url, "POST", "/ui/login/password", {
        body: new URLSearchParams({ loginName: "admin", password: "wrong", csrf }).toString(),
        headers: { ...form, cookie },
      });
    for (let i = 0; i < 3; i++) expect((await post()).status).toBe(401);
    const limited = await post();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(String(limited.body)).toContain("Too many attempts");
    // the refused attempts did not reach the password check: the admin's failure count stopped at 3
    const admin = await perAddress.server.db.prisma.user.findFirstOrThrow({ where: { instanceId: perAddress.instanceId, loginName: "admin" } });
    expect(admin.passwordFailures).toBe(3);
  });

  it("counts in fixed windows that end: a new window allows again", async () => {
    let now = Date.UTC(2030, 0, 1, 0, 0, 10);
    const limiter = new RateLimiter(perClient.server.db, { now: () => now });
    const rule = { limit: 2, windowS: 30 };
    expect((await limiter.hit("test:window", rule)).allowed).toBe(true);
    expect((await limiter.hit("test:window", rule)).allowed).toBe(true);
    const third = await limiter.hit("test:window", rule);
    expect(third).toEqual({ allowed: false, retryAfterS: 20 });
    now += 20_000;
    expect((await limiter.hit("test:window", rule)).allowed).toBe(true);
  });

  it("counts exactly under concurrency (one atomic upsert per request)", async () => {
    const limiter = new RateLimiter(perClient.server.db, { now: () => Date.UTC(2030, 0, 1, 0, 0, 10) });
    const rule = { limit: 25, windowS: 600 };
    // Several rounds: answers that come back out of order must each be judged by their own count.
    for (let round = 0; round < 8; round++) {
      const verdicts = await Promise.all(Array.from({ length: 40 }, () => limiter.hit(`test:concurrent-${round}`, rule)));
      expect(verdicts.filter((v) => v.allowed).length, `round ${round}`).toBe(25);
    }
    // The answers held until all 40 are in, then handed back last first: each is still judged by its own count.
    const real = perClient.server.db.pool;
    const held: { answer: unknown; release: (a: unknown) => void }[] = [];
    const query = async (...args: Parameters<typeof real.query>) => {
      const answer = await real.query(...args);
      return new Promise((release) => {
        held.push({ answer, release });
        if (held.length === 40) for (const h of held.reverse()) h.release(h.answer);
      });
    };
    const reversed = new RateLimiter({ pool: { query } } as unknown as Database, { now: () => Date.UTC(2030, 0, 1, 0, 0, 10) });
    const verdicts = await Promise.all(Array.from({ length: 40 }, () => reversed.hit("test:concurrent-reversed", rule)));
    expect(verdicts.filter((v) => v.allowed).length).toBe(25);
  });

  it("counts every key of a request in one statement; the longest wait decides, a key named twice counts once", async () => {
    const { db, statements } = countingDb(perClient.server.db);
    const now = Date.UTC(2030, 0, 1, 0, 0, 10);
    const limiter = new RateLimiter(db, { now: () => now });
    const wide = { limit: 3, windowS: 60 };
    const narrow = { limit: 1, windowS: 30 };
    const request = () =>
      limiter.check([
        { key: "test:both:a", rule: wide },
        { key: "test:both:b", rule: narrow },
        { key: "test:both:a", rule: narrow },
        { key: "test:none", rule: undefined },
      ]);
    expect(await request()).toEqual({ allowed: true, retryAfterS: 0 });
    expect(statements()).toBe(1);
    // b is over its limit of 1 in its 30 s window (20 s left); a is at 2 of 3 (counted once per request)
    expect(await request()).toEqual({ allowed: false, retryAfterS: 20 });
    expect(statements()).toBe(2);
    const rows = await perClient.server.db.pool.query<{ key: string; hits: number }>(
      "SELECT key, hits FROM rate_limit_counts WHERE key LIKE 'test:both:%' ORDER BY key",
    );
    expect(rows.rows).toEqual([
      { key: "test:both:a", hits: 2 },
      { key: "test:both:b", hits: 2 },
    ]);
    expect(await limiter.check([{ key: "test:none", rule: undefined }])).toEqual({ allowed: true, retryAfterS: 0 });
    expect(statements()).toBe(2);
  });

  it("refuses a key over its limit without asking the database again until its window ends", async () => {
    const { db, statements } = countingDb(perClient.server.db);
    let now = Date.UTC(2030, 0, 1, 0, 1, 0);
    const limiter = new RateLimiter(db, { now: () => now });
    const rule = { limit: 2, windowS: 30 };
    for (let i = 0; i < 2; i++) expect((await limiter.hit("test:flood", rule)).allowed).toBe(true);
    expect(await limiter.hit("test:flood", rule)).toEqual({ allowed: false, retryAfterS: 30 });
    expect(statements()).toBe(3);
    now += 10_000;
    for (let i = 0; i < 50; i++) expect(await limiter.hit("test:flood", rule)).toEqual({ allowed: false, retryAfterS: 20 });
    expect(statements()).toBe(3);
    // nor are the request's other keys counted: a flood under new client IDs from one address costs nothing
    const both = [
      { key: "test:flood-other", rule },
      { key: "test:flood", rule },
    ];
    expect(await limiter.check(both)).toEqual({ allowed: false, retryAfterS: 20 });
    expect(await storedHits(perClient.server.db, "test:flood-other")).toBeUndefined();
    expect(statements()).toBe(3);
    now += 20_000;
    expect((await limiter.hit("test:flood", rule)).allowed).toBe(true);
    expect(statements()).toBe(4);
  });

  it("far below a large limit counts here and flushes the requests together; near it, counts each exactly", async () => {
    const { db, statements } = countingDb(perClient.server.db);
    const limiter = new RateLimiter(db, { now: () => Date.UTC(2030, 0, 1, 0, 2, 0) });
    const rule = { limit: 1500, windowS: 600 };
    for (let i = 0; i < 400; i++) expect((await limiter.hit("test:large", rule)).allowed).toBe(true);
    expect(statements()).toBe(0);
    // flushed by itself, every 100 ms
    await expect.poll(() => storedHits(perClient.server.db, "test:large"), { timeout: 5000 }).toBe(400);
    expect(statements()).toBe(1);
    let allowed = 400;
    while ((await limiter.hit("test:large", rule)).allowed) allowed++;
    expect(allowed).toBe(1500);
    expect(await storedHits(perClient.server.db, "test:large")).toBe(1501);
    const more = statements();
    expect((await limiter.hit("test:large", rule)).allowed).toBe(false);
    expect(statements()).toBe(more);
  });

  it("counts requests of a flush still unanswered as counted: near the limit it counts exactly again", async () => {
    const real = perClient.server.db.pool;
    let statements = 0;
    let release!: () => void;
    const answered = new Promise<void>((r) => (release = r));
    const query = async (...args: Parameters<typeof real.query>) => {
      statements++;
      const answer = await real.query(...args);
      await answered;
      return answer;
    };
    const limiter = new RateLimiter({ pool: { query } } as unknown as Database, { now: () => Date.UTC(2030, 0, 1, 0, 4, 0) });
    const rule = { limit: 1500, windowS: 600 };
    for (let i = 0; i < 450; i++) await limiter.hit("test:in-flight", rule);
    const flushed = limiter.flush();
    expect(statements).toBe(1);
    // 450 are on their way: 50 more are counted here, then the limit is 1,000 away and the next goes to the database
    for (let i = 0; i < 50; i++) await limiter.hit("test:in-flight", rule);
    expect(statements).toBe(1);
    const exact = limiter.hit("test:in-flight", rule);
    expect(statements).toBe(2);
    release();
    await flushed;
    expect((await exact).allowed).toBe(true);
    expect(await storedHits(perClient.server.db, "test:in-flight")).toBe(501);
  });

  it("Retry-After is the longest wait of the exceeded windows", async () => {
    const limiter = new RateLimiter(perClient.server.db, { now: () => Date.UTC(2030, 0, 1, 0, 5, 0) });
    const keys = [
      { key: "test:short", rule: { limit: 1, windowS: 30 } },
      { key: "test:long", rule: { limit: 1, windowS: 60 } },
    ];
    expect((await limiter.check(keys)).allowed).toBe(true);
    expect(await limiter.check(keys)).toEqual({ allowed: false, retryAfterS: 60 });
    expect(await limiter.check(keys)).toEqual({ allowed: false, retryAfterS: 60 });
  });

  it("flushes at close and not after, also when the database is gone", async () => {
    const { db, statements } = countingDb(perClient.server.db);
    const limiter = new RateLimiter(db, { now: () => Date.UTC(2030, 0, 1, 0, 6, 0) });
    const rule = { limit: 100_000, windowS: 600 };
    for (let i = 0; i < 7; i++) await limiter.hit("test:close", rule);
    await limiter.close();
    expect(await storedHits(perClient.server.db, "test:close")).toBe(7);
    await limiter.hit("test:close", rule);
    await new Promise((r) => setTimeout(r, 300));
    expect(statements()).toBe(1);
    const failing = countingDb(perClient.server.db, 100);
    const gone = new RateLimiter(failing.db, { now: () => Date.UTC(2030, 0, 1, 0, 6, 0) });
    await gone.hit("test:close-gone", rule);
    await gone.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(failing.statements()).toBe(1);
  });

  it("keeps a window for a rule built anew by each request", async () => {
    const { db, statements } = countingDb(perClient.server.db);
    const limiter = new RateLimiter(db, { now: () => Date.UTC(2030, 0, 1, 0, 7, 0) });
    for (let i = 0; i < 20; i++) await limiter.hit("test:fresh-rule", { limit: 100_000, windowS: 600 });
    await limiter.flush();
    expect(statements()).toBe(1);
    expect(await storedHits(perClient.server.db, "test:fresh-rule")).toBe(20);
  });

  it("keeps the requests counted here when a flush fails, and adds them with the next", async () => {
    const { db, statements } = countingDb(perClient.server.db, 1);
    const limiter = new RateLimiter(db, { now: () => Date.UTC(2030, 0, 1, 0, 3, 0) });
    const rule = { limit: 100_000, windowS: 600 };
    for (let i = 0; i < 30; i++) await limiter.hit("test:retry", rule);
    await limiter.flush();
    // the one statement failed; its requests go with the next
    expect(statements()).toBe(1);
    await limiter.hit("test:retry", rule);
    await limiter.flush();
    expect(await storedHits(perClient.server.db, "test:retry")).toBe(31);
  });
});

describe("rate limits shared by two processes on one PostgreSQL", () => {
  let a: TestServer;
  let b: RunningCli;
  const dir = mkdtempSync(join(tmpdir(), "svc-rate-"));
  const limits = { SVC_RATE_LIMIT_OAUTH_CLIENT: `6/${WINDOW_S}`, SVC_RATE_LIMIT_OAUTH_ADDRESS: "off", SVC_RATE_LIMIT_LOGIN_ADDRESS: "off" };

  beforeAll(async () => {
    // The same master key for both, so that the second opens the first's secrets.
    a = await startTestServer({ ...limits, SVC_MASTERKEY: TEST_MASTERKEY });
    // With TEST_DATABASE_URL (CI: .ci/run sets it) the first server's PostgreSQL database; on the embedded
    // database the PostgreSQL the first server runs, through its socket: a second process on it either way.
    const url =
      (a.server.db.connection as { connectionString?: string }).connectionString ??
      runningEmbeddedUrl(a.server.firstInstance.passwordFile!.replace(/\/admin\.password$/, ""));
    expect(url).toBeDefined();
    // the server itself when the run goes through a pooler (test/support/pooler.ts)
    const direct = (a.server.db.sessions as { connectionString?: string }).connectionString;
    const sessions: Record<string, string> = direct && direct !== url ? { SVC_DATABASE_DIRECT_URL: direct } : {};
    b = await startCli(
      [],
      { ...limits, ...sessions, DATABASE_URL: url!, SVC_MASTERKEY: TEST_MASTERKEY, SVC_PORT: "0", SVC_HOST: "127.0.0.1", SVC_DATA_DIR: dir },
      90_000,
    );
  }, 120_000);
  afterAll(async () => {
    b?.child.kill("SIGTERM");
    await b?.exited;
    await a?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lets the limit through in total, alternating between the processes, then both answer 429", async () => {
    const urls = [a.url, b.url.replace("localhost", "127.0.0.1")];
    for (let i = 0; i < 6; i++) expect((await tokenWith(urls[i % 2]!, "shared-client")).status, `request ${i}`).toBe(401);
    expect429(await tokenWith(urls[0]!, "shared-client"), WINDOW_S);
    expect429(await tokenWith(urls[1]!, "shared-client"), WINDOW_S);
  });
});

describe("the same answer and time whether or not the account exists", () => {
  let t: TestServer;
  beforeAll(async () => {
    // A verification at the default cost (2^15, about 100 ms here) outweighs an HTTP round trip many times over: an
    // answer without one stands out. The two kinds of attempt alternate, so a busy machine slows both alike; a
    // verification timed apart from them (an earlier form of this test) could land on a busier moment than they did.
    t = await startTestServer({ SVC_PASSWORD_HASH_COST: "15" });
  });
  afterAll(() => t?.close());

  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; r: T }> {
    const start = performance.now();
    const r = await f();
    return { ms: performance.now() - start, r };
  }

  it("token endpoint: an unknown client and a wrong secret get the same 401, after a secret verification each", async () => {
    const { userId } = await t.serviceUser("timing-machine");
    const { generateClientSecret } = await import("../../src/command/users.js");
    const { clientId } = await generateClientSecret(t.server.es, { instanceId: t.instanceId, id: userId, creator: "test" });
    const unknown: number[] = [];
    const wrong: number[] = [];
    const bodies = new Set<string>();
    for (let i = 0; i < 5; i++) {
      for (const [client, into] of [
        ["no-such-client", unknown],
        [clientId, wrong],
      ] as const) {
        const { ms, r } = await timed(() => tokenWith(t.url, client));
        expect(r.status).toBe(401);
        bodies.add(JSON.stringify(r.body));
        into.push(ms);
      }
    }
    expect([...bodies]).toEqual([JSON.stringify({ error: "invalid_client", error_description: "client authentication failed" })]);
    // without the decoy an unknown client answered at once: a tenth of a wrong secret's time or less
    expect(median(unknown)).toBeGreaterThan(median(wrong) * 0.3);
  });

  it("login form: an unknown login name and a wrong password get the same page and status, after a password verification each", async () => {
    const page = await rest(t.url, "GET", "/ui/login");
    const cookie = String(page.headers["set-cookie"]).split(";")[0]!;
    const csrf = (page.body as string).match(/name="csrf" value="([^"]+)"/)![1]!;
    const post = (loginName: string) =>
      rest(t.url, "POST", "/ui/login/password", {
        body: new URLSearchParams({ loginName, password: "wrong", csrf }).toString(),
        headers: { ...form, cookie },
      });
    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await timed(() => post("nobody-here"));
      const b = await timed(() => post("admin"));
      expect([a.r.status, b.r.status]).toEqual([401, 401]);
      // The typed name is shown back (heading, hidden field, the forgot-password link); everything else must match.
      const shown = (html: unknown, name: string) =>
        String(html)
          .replaceAll(`>${name}<`, ">X<")
          .replaceAll(`value="${name}"`, 'value="X"')
          .replaceAll(`loginName=${encodeURIComponent(name)}"`, 'loginName=X"');
      expect(shown(a.r.body, "nobody-here")).toBe(shown(b.r.body, "admin"));
      unknown.push(a.ms);
      wrong.push(b.ms);
    }
    // A wrong password also records the failed check (a write, slow on a busy machine: 55 ms against 140 ms was seen
    // at 2^14); without the decoy an unknown name took a tenth of a wrong password's time or less.
    expect(median(unknown)).toBeGreaterThan(median(wrong) * 0.3);
  });
});
