import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { resolveClient, TrustedProxies } from "../../src/domain/forwarded.js";
import { addHuman, webApp } from "../oidc/rp.js";
import { rest } from "../support/clients.js";
import { MovableClock } from "../support/clock.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * SVC_TRUSTED_PROXIES (contract, "Deployment: proxies, limits, TLS, build"): only a peer in it is believed about
 * Forwarded / X-Forwarded-For / -Proto / -Host; the client is the nearest address in the chain that is not a
 * trusted proxy; the scheme and host forwarded make the issuer.
 */
describe("the client behind trusted proxies", () => {
  const trusted = new TrustedProxies("10.0.0.0/8, 192.0.2.1, 2001:db8::/32");
  const peer = (address: string, host = "id.example.com") => ({ address, encrypted: false, host });

  it("believes forwarding headers only from a trusted peer", () => {
    expect(resolveClient(peer("198.51.100.9"), { "x-forwarded-for": "203.0.113.7", "x-forwarded-proto": "https" }, trusted)).toEqual({
      address: "198.51.100.9",
      secure: false,
      host: "id.example.com",
    });
    expect(
      resolveClient(peer("10.1.2.3"), { "x-forwarded-for": "203.0.113.7", "x-forwarded-proto": "https", "x-forwarded-host": "login.example.com" }, trusted),
    ).toEqual({
      address: "203.0.113.7",
      secure: true,
      host: "login.example.com",
    });
  });

  it("takes the nearest untrusted address of the chain, so a client cannot spoof the start of it", () => {
    // the client wrote 1.2.3.4 itself; the proxies appended what they saw
    const headers = { "x-forwarded-for": "1.2.3.4, 203.0.113.7, 10.9.9.9" };
    expect(resolveClient(peer("10.1.2.3"), headers, trusted).address).toBe("203.0.113.7");
    // a chain of trusted proxies only: its first address
    expect(resolveClient(peer("10.1.2.3"), { "x-forwarded-for": "10.0.0.5, 10.0.0.6" }, trusted).address).toBe("10.0.0.5");
    expect(resolveClient(peer("::ffff:10.1.2.3"), headers, trusted).address).toBe("203.0.113.7");
  });

  it("reads RFC 7239 Forwarded, quoted, with ports and IPv6, when the proxies write that family", () => {
    const viaForwarded = new TrustedProxies("10.0.0.0/8, 192.0.2.1, 2001:db8::/32", "forwarded");
    const forwarded = 'for="[2001:db8:cafe::17]:4711", for=192.0.2.1:8080;proto=https;host=id.example.org';
    expect(resolveClient(peer("192.0.2.1"), { forwarded, "x-forwarded-for": "9.9.9.9" }, viaForwarded)).toEqual({
      address: "2001:db8:cafe::17",
      secure: true,
      host: "id.example.org",
    });
    // unknown or obfuscated: the chain says no more, the last known address stands
    expect(resolveClient(peer("10.1.2.3"), { forwarded: "for=unknown, for=10.0.0.7" }, viaForwarded).address).toBe("10.0.0.7");
    expect(resolveClient(peer("10.1.2.3"), { forwarded: "for=_hidden" }, viaForwarded).address).toBe("10.1.2.3");
  });

  it("reads one family only: a client's own Forwarded does not beat the proxy's X-Forwarded-For (review of issue 26)", () => {
    const spoof = { "x-forwarded-for": "203.0.113.9", forwarded: "for=198.51.100.77;host=other.example;proto=https" };
    expect(resolveClient(peer("10.1.2.3"), spoof, trusted)).toEqual({ address: "203.0.113.9", secure: false, host: "id.example.com" });
    const viaForwarded = new TrustedProxies("10.0.0.0/8", "forwarded");
    const other = { forwarded: "for=203.0.113.9", "x-forwarded-for": "198.51.100.77" };
    expect(resolveClient(peer("10.1.2.3"), other, viaForwarded).address).toBe("203.0.113.9");
  });

  it("takes scheme and host only from what the peer itself appended, not from hops before it", () => {
    const viaForwarded = new TrustedProxies("10.0.0.0/8", "forwarded");
    const forwarded = "for=1.1.1.1;host=other.example, for=203.0.113.9;proto=https";
    expect(resolveClient(peer("10.1.2.3"), { forwarded }, viaForwarded)).toEqual({ address: "203.0.113.9", secure: true, host: "id.example.com" });
  });

  it("refuses a bad SVC_TRUSTED_PROXIES or _HEADER naming the variable and the item; none by default", () => {
    expect(() => loadConfig({ SVC_TRUSTED_PROXIES: "10.0.0.0/8, proxy.local" }, [])).toThrow(
      /SVC_TRUSTED_PROXIES.*"proxy.local" is neither an address nor a CIDR range/,
    );
    // a prefix as written, digits only: "10.0.0.1/" must not trust everyone as /0, "/-0" must not crash node
    for (const bad of ["10.0.0.1/", "10.0.0.0/-0", "10.0.0.0/0x8", "10.0.0.0/1e1", "10.0.0.0/ 8", "10.0.0.0/33"]) {
      expect(() => loadConfig({ SVC_TRUSTED_PROXIES: bad }, []), bad).toThrow(/SVC_TRUSTED_PROXIES.*neither an address nor a CIDR range/);
    }
    expect(() => loadConfig({ SVC_TRUSTED_PROXIES_HEADER: "x-real-ip" }, [])).toThrow(/SVC_TRUSTED_PROXIES_HEADER must be x-forwarded or forwarded/);
    const none = loadConfig({}, []).trustedProxies;
    expect(new TrustedProxies(none.spec, none.headers).none).toBe(true);
    expect(none.headers).toBe("x-forwarded");
  });
});

/** A request from a loopback address of our choice, with headers. */
function request(url: string, path: string, opts: { from?: string; headers?: Record<string, string>; method?: string; form?: Record<string, string> }) {
  const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
  return new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request(
      `${url}${path}`,
      {
        method: opts.method ?? (body ? "POST" : "GET"),
        headers: { ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}), ...opts.headers },
        ...(opts.from ? { localAddress: opts.from } : {}),
      },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("a server behind a trusted proxy", () => {
  let t: TestServer;
  const lines: string[] = [];
  const PASSWORD = "Correct!horse9";
  // time stands still, so that the limits' buckets do not refill between guesses on a slow machine
  const clock = new MovableClock();
  clock.freeze();
  beforeAll(async () => {
    // 127.0.0.1 is the proxy; the failure limits at their defaults
    t = await startTestServer(
      { SVC_TRUSTED_PROXIES: "127.0.0.1", SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS: "", SVC_LOG_LEVEL: "info" },
      { logger: true, logStream: { write: (line) => void lines.push(line) }, clock },
    );
    for (const name of ["office", "u0", "u1", "u2", "u3", "u4"]) await addHuman(t, name, PASSWORD);
  });
  afterAll(() => t?.close());

  /** A password sign-in through the proxy for the forwarded client `forwardedFor`, or straight from `from`. */
  async function signIn(password: string, via: { forwardedFor?: string; from?: string }, loginName = "office") {
    const headers = via.forwardedFor ? { "x-forwarded-for": via.forwardedFor } : undefined;
    const page = await request(t.url, "/ui/login", { ...(via.from ? { from: via.from } : {}), ...(headers ? { headers } : {}) });
    const cookie = [page.headers["set-cookie"] ?? []]
      .flat()
      .map((c) => c.split(";")[0])
      .join("; ");
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const r = await request(t.url, "/ui/login/password", {
      ...(via.from ? { from: via.from } : {}),
      headers: { ...headers, cookie, origin: t.url },
      form: { loginName, password, csrf },
    });
    return r.status;
  }

  it("limits a spray behind the proxy by its forwarded address, and another client behind the same proxy signs in", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push(await signIn(`guess-${i}`, { forwardedFor: "203.0.113.66" }, `u${i % 5}`));
    expect(statuses).toContain(429);
    expect(await signIn(PASSWORD, { forwardedFor: "203.0.113.67" })).toBe(200);
  });

  it("ignores forwarding headers from an untrusted peer: spoofing a new address each time changes nothing", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push(await signIn(`guess-${i}`, { from: "127.0.0.2", forwardedFor: `198.51.100.${i}` }, `u${i % 5}`));
    expect(statuses).toContain(429);
  });

  it("makes the issuer of the forwarded scheme and host, when the host is an instance's", async () => {
    const viaProxy = await request(t.url, "/.well-known/openid-configuration", { headers: { "x-forwarded-proto": "https", "x-forwarded-host": "localhost" } });
    expect(JSON.parse(viaProxy.body).issuer).toBe("https://localhost");
    const spoofed = await request(t.url, "/.well-known/openid-configuration", {
      from: "127.0.0.2",
      headers: { "x-forwarded-proto": "https", "x-forwarded-host": "localhost" },
    });
    expect(JSON.parse(spoofed.body).issuer).toBe(`http://127.0.0.1:${t.port}`);
    // a forwarded host that no instance has is not served
    expect((await request(t.url, "/.well-known/openid-configuration", { headers: { "x-forwarded-host": "evil.example" } })).status).toBe(404);
  });

  it("the sessions API's callback names the forwarded issuer (RFC 9207 iss)", async () => {
    const loginClient = (await t.serviceUser("login-client", [{ type: "instance", id: t.instanceId, roles: ["IAM_LOGIN_CLIENT"] }])).token;
    expect(
      (await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { customLoginUrl: { set: "https://login.example.com/ui" } } })).status,
    ).toBe(200);
    const app = await webApp(t, { origin: "https://rp.example.com" });
    const authorize = new URLSearchParams({
      client_id: app.clientId,
      redirect_uri: "https://rp.example.com/cb",
      response_type: "code",
      scope: "openid",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    });
    const started = await request(t.url, `/oauth/v2/authorize?${authorize}`, { headers: { "x-svc-login-client": "custom" } });
    const authRequest = new URL(started.headers.location!).searchParams.get("authRequest")!;
    const api = (method: string, path: string, body: unknown) =>
      rest(t.url, method, `/resources/v3alpha${path}`, {
        token: loginClient,
        body,
        headers: { "x-forwarded-proto": "https", "x-forwarded-host": "localhost" },
      });
    const session = await api("POST", "/sessions", { checks: { user: { loginName: "office" }, password: { password: PASSWORD } } });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const callback = await api("POST", `/auth_requests/${authRequest}/_callback`, {
      session: { sessionId: session.body.details.id, sessionToken: session.body.sessionToken },
    });
    expect(callback.status, JSON.stringify(callback.body)).toBe(200);
    expect(new URL(callback.body.callbackUrl).searchParams.get("iss")).toBe("https://localhost");
  });

  it("logs the forwarded client address", async () => {
    // Not a probe: /healthz, /readyz and /metrics are logged at debug only.
    await request(t.url, "/.well-known/openid-configuration", { headers: { "x-forwarded-for": "203.0.113.99" } });
    expect(lines.some((l) => l.includes('"remoteAddress":"203.0.113.99"'))).toBe(true);
  });
});
