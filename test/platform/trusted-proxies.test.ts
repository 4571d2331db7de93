import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { resolveClient, TrustedProxies } from "../../src/domain/forwarded.js";
import { addHuman } from "../oidc/rp.js";
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

  it("reads RFC 7239 Forwarded, quoted, with ports and IPv6, before X-Forwarded-*", () => {
    const forwarded = 'for="[2001:db8:cafe::17]:4711";proto=https;host=id.example.org, for=192.0.2.1:8080';
    expect(resolveClient(peer("192.0.2.1"), { forwarded, "x-forwarded-for": "9.9.9.9" }, trusted)).toEqual({
      address: "2001:db8:cafe::17",
      secure: true,
      host: "id.example.org",
    });
    // unknown or obfuscated: the chain says no more, the last known address stands
    expect(resolveClient(peer("10.1.2.3"), { forwarded: "for=unknown, for=10.0.0.7" }, trusted).address).toBe("10.0.0.7");
    expect(resolveClient(peer("10.1.2.3"), { forwarded: "for=_hidden" }, trusted).address).toBe("10.1.2.3");
  });

  it("refuses a bad SVC_TRUSTED_PROXIES naming the variable and the item; none by default", () => {
    expect(() => loadConfig({ SVC_TRUSTED_PROXIES: "10.0.0.0/8, proxy.local" }, [])).toThrow(
      /SVC_TRUSTED_PROXIES.*"proxy.local" is neither an address nor a CIDR range/,
    );
    expect(new TrustedProxies(loadConfig({}, []).trustedProxies).none).toBe(true);
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
  beforeAll(async () => {
    // 127.0.0.1 is the proxy; the failure limits at their defaults
    t = await startTestServer(
      { SVC_TRUSTED_PROXIES: "127.0.0.1", SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS: "", SVC_LOG_LEVEL: "info" },
      { logger: true, logStream: { write: (line) => void lines.push(line) } },
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

  it("logs the forwarded client address", async () => {
    await request(t.url, "/healthz", { headers: { forwarded: "for=203.0.113.99" } });
    expect(lines.some((l) => l.includes('"remoteAddress":"203.0.113.99"'))).toBe(true);
  });
});
