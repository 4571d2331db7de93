import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LanguageSettingsService,
  ResolveLanguageSettingsRequestSchema,
  type ResolveLanguageSettingsResponse,
} from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** A test CA and the server certificates it signs, made with openssl (node:crypto cannot write X.509). */
const work = mkdtempSync(join(tmpdir(), "svc-tls-"));
const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: work, stdio: ["ignore", "pipe", "pipe"] });
const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

interface Issued {
  cert: string;
  key: string;
  /** As Node shows it (upper-case hex). */
  serial: string;
}

function makeCa(): string {
  openssl("req", "-x509", ...EC, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=svc test CA");
  return readFileSync(join(work, "ca.crt"), "utf8");
}

/** A server certificate for localhost and 127.0.0.1, signed by the test CA. */
function issue(name: string, serial: number): Issued {
  writeFileSync(join(work, `${name}.ext`), "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
  openssl("req", ...EC, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
  openssl(
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-set_serial",
    String(serial),
    "-days",
    "2",
    "-out",
    `${name}.crt`,
    "-extfile",
    `${name}.ext`,
  );
  const cert = readFileSync(join(work, `${name}.crt`), "utf8");
  return { cert, key: readFileSync(join(work, `${name}.key`), "utf8"), serial: new X509Certificate(cert).serialNumber };
}

/**
 * The files as a Kubernetes secret volume holds them: `tls.crt` and `tls.key` are symlinks into `..data`, itself a
 * symlink to a directory of the current version, and an update swaps `..data` atomically (rename of a new link).
 */
const mount = join(work, "mount");
let version = 0;
function publish(cert: string, key: string): void {
  const dir = `..v${++version}`;
  mkdirSync(join(mount, dir), { recursive: true });
  writeFileSync(join(mount, dir, "tls.crt"), cert);
  writeFileSync(join(mount, dir, "tls.key"), key, { mode: 0o600 });
  symlinkSync(dir, join(mount, "..data_tmp"));
  renameSync(join(mount, "..data_tmp"), join(mount, "..data"));
  if (version === 1) {
    symlinkSync("..data/tls.crt", join(mount, "tls.crt"));
    symlinkSync("..data/tls.key", join(mount, "tls.key"));
  }
}

let ca: string;
let first: Issued;
let t: TestServer;
let base: string;
const logs: string[] = [];

beforeAll(async () => {
  ca = makeCa();
  first = issue("first", 4097);
  publish(first.cert, first.key);
  t = await startTestServer(
    // A grace period longer than the test: close must not wait for it once nothing is in flight.
    { SVC_TLS_CERT: join(mount, "tls.crt"), SVC_TLS_KEY: join(mount, "tls.key"), SVC_LOG_LEVEL: "warn", SVC_SHUTDOWN_GRACE_MS: "60000" },
    { logger: true, logStream: { write: (line) => void logs.push(line) } },
  );
  base = t.server.url;
});
afterAll(async () => {
  await t?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A TLS connection to the server: what it negotiated and the certificate it presented. */
function handshake(alpn?: string[]): Promise<{ alpn: string | false; serial: string; subject: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port: t.port, ca, servername: "localhost", ...(alpn ? { ALPNProtocols: alpn } : {}) }, () => {
      const peer = socket.getPeerCertificate();
      resolve({ alpn: socket.alpnProtocol ?? false, serial: peer.serialNumber, subject: peer.subject.CN as string });
      socket.destroy();
    });
    socket.once("error", reject);
  });
}

/** An HTTPS request over HTTP/1.1 trusting the test CA. */
function httpsRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: opts.method ?? "GET", headers: opts.headers, ca, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

const svc = LanguageSettingsService;

/** gRPC over TLS with grpc-js (by name: grpc-js would send an IP address as the TLS server name, which RFC 6066 forbids). */
function grpcOverTls(host = `localhost:${t.port}`): Promise<ResolveLanguageSettingsResponse> {
  const client = new grpc.Client(host, grpc.credentials.createSsl(Buffer.from(ca)));
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${t.adminPat}`);
  const method = svc.method.resolveLanguages;
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      `/${svc.typeName}/${method.name}`,
      (m: ReturnType<typeof create<typeof ResolveLanguageSettingsRequestSchema>>) => Buffer.from(toBinary(method.input, m)),
      (b: Buffer) => fromBinary(method.output, b),
      create(ResolveLanguageSettingsRequestSchema, {}),
      md,
      (err, res) => {
        client.close();
        if (err) reject(err);
        else resolve(res!);
      },
    );
  });
}

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("configuration", () => {
  const env = (e: Record<string, string>) => ({ SVC_DATA_DIR: join(work, "data"), ...e });
  const problem = (e: Record<string, string>) => {
    try {
      loadConfig(env(e), []);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    return "no error";
  };

  it("needs both files, readable, PEM, and a key that is the certificate's: one line naming the variable", () => {
    const other = issue("other", 7);
    writeFileSync(join(work, "garbage.pem"), "not a certificate\n");
    const cert = join(work, "first.crt");
    const key = join(work, "first.key");
    expect(problem({ SVC_TLS_CERT: cert })).toMatch(/^SVC_TLS_CERT and SVC_TLS_KEY go together: SVC_TLS_CERT is set, SVC_TLS_KEY is not$/);
    expect(problem({ SVC_TLS_KEY: key })).toMatch(/^SVC_TLS_CERT and SVC_TLS_KEY go together: SVC_TLS_KEY is set, SVC_TLS_CERT is not$/);
    expect(problem({ SVC_TLS_CERT: join(work, "missing.crt"), SVC_TLS_KEY: key })).toMatch(/^SVC_TLS_CERT \S+missing\.crt cannot be read: ENOENT$/);
    expect(problem({ SVC_TLS_CERT: cert, SVC_TLS_KEY: join(work, "missing.key") })).toMatch(/^SVC_TLS_KEY \S+missing\.key cannot be read: ENOENT$/);
    expect(problem({ SVC_TLS_CERT: join(work, "garbage.pem"), SVC_TLS_KEY: key })).toMatch(/^SVC_TLS_CERT \S+garbage\.pem holds no PEM certificate/);
    expect(problem({ SVC_TLS_CERT: cert, SVC_TLS_KEY: join(work, "garbage.pem") })).toMatch(
      /^SVC_TLS_KEY \S+garbage\.pem holds no unencrypted PEM private key/,
    );
    // a certificate given as the key is no key either
    expect(problem({ SVC_TLS_CERT: cert, SVC_TLS_KEY: cert })).toMatch(/^SVC_TLS_KEY \S+first\.crt holds no unencrypted PEM private key/);
    expect(problem({ SVC_TLS_CERT: cert, SVC_TLS_KEY: join(work, "other.key") })).toMatch(
      /^SVC_TLS_KEY \S+other\.key is not the key of the certificate in SVC_TLS_CERT \S+first\.crt$/,
    );
    for (const message of [problem({ SVC_TLS_CERT: cert }), problem({ SVC_TLS_CERT: cert, SVC_TLS_KEY: join(work, "other.key") })]) {
      expect(message).not.toContain("\n");
    }
    expect(other.serial).not.toBe(first.serial);
  });

  it("makes the issuer https by default with TLS; SVC_EXTERNAL_SECURE set explicitly wins", () => {
    const files = { SVC_TLS_CERT: join(work, "first.crt"), SVC_TLS_KEY: join(work, "first.key") };
    expect(loadConfig(env({}), []).externalSecure).toBe(false);
    expect(loadConfig(env({}), []).tls).toBeUndefined();
    expect(loadConfig(env(files), [])).toMatchObject({ externalSecure: true, tls: { certPath: files.SVC_TLS_CERT, keyPath: files.SVC_TLS_KEY } });
    expect(loadConfig(env({ ...files, SVC_EXTERNAL_SECURE: "false" }), []).externalSecure).toBe(false);
    expect(loadConfig(env({ SVC_EXTERNAL_SECURE: "true" }), []).externalSecure).toBe(true);
  });
});

describe("TLS on the one port", () => {
  it("negotiates h2 and http/1.1 by ALPN, and HTTP/1.1 for a client without ALPN", async () => {
    expect(base).toBe(`https://127.0.0.1:${t.port}`);
    expect(await handshake(["h2", "http/1.1"])).toMatchObject({ alpn: "h2", serial: first.serial, subject: "first" });
    expect((await handshake(["http/1.1"])).alpn).toBe("http/1.1");
    expect((await handshake()).alpn).toBe(false);
    // without ALPN: an HTTP/1.1 answer (node:https sends no ALPN)
    const r = await httpsRequest(`${base}/healthz`);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ status: "ok" });
    // and over h2
    const session = http2.connect(base, { ca, servername: "localhost" });
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const s = session.request({ ":path": "/healthz" });
        let body = "";
        let status = 0;
        s.on("response", (h) => (status = Number(h[":status"])));
        s.on("data", (c) => (body += c));
        s.on("end", () => resolve({ status, body }));
        s.on("error", reject);
      });
      expect(answer).toEqual({ status: 200, body: '{"status":"ok"}' });
      expect(session.alpnProtocol).toBe("h2");
    } finally {
      session.close();
    }
  });

  it("refuses plain HTTP and h2c on the TLS port", async () => {
    await expect(rest(`http://127.0.0.1:${t.port}`, "GET", "/healthz")).rejects.toThrow();
  });

  it("serves gRPC (grpc-js with TLS credentials), Connect over h2 and HTTP/1.1, and gRPC-web", async () => {
    expect((await grpcOverTls()).settings?.defaultLanguage?.value).toBe("en");
    const headers = { authorization: `Bearer ${t.adminPat}` };
    const transports = {
      "connect-h2": createConnectTransport({ baseUrl: base, httpVersion: "2", nodeOptions: { ca, servername: "localhost" } }),
      "connect-h1": createConnectTransport({ baseUrl: base, httpVersion: "1.1", nodeOptions: { ca } }),
      "grpc-web": createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1", nodeOptions: { ca } }),
      "grpc-web-h2": createGrpcWebTransport({ baseUrl: base, httpVersion: "2", nodeOptions: { ca, servername: "localhost" } }),
    };
    for (const [name, transport] of Object.entries(transports)) {
      const res = await createClient(svc, transport).resolveLanguages({}, { headers });
      expect(res.settings?.defaultLanguage?.value, name).toBe("en");
    }
  });

  it("serves REST and the OIDC provider over https; the issuer is https", async () => {
    const set = await httpsRequest(`${base}/settings/v3alpha/languages`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${t.adminPat}`, "content-type": "application/json" },
      body: JSON.stringify({ defaultLanguage: { key: "de" } }),
    });
    expect(set.status).toBe(200);
    const got = await httpsRequest(`${base}/settings/v3alpha/languages`, { headers: { authorization: `Bearer ${t.adminPat}` } });
    expect(JSON.parse(got.text).settings.defaultLanguage.value).toBe("de");
    await httpsRequest(`${base}/settings/v3alpha/languages`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${t.adminPat}`, "content-type": "application/json" },
      body: JSON.stringify({ defaultLanguage: { key: "en" } }),
    });
    const discovery = await httpsRequest(`${base}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    const doc = JSON.parse(discovery.text);
    expect(doc.issuer).toBe(base);
    expect(doc.token_endpoint).toBe(`${base}/oauth/v2/token`);
    expect((await httpsRequest(doc.jwks_uri)).status).toBe(200);
  });

  it("sends Strict-Transport-Security on pages over TLS, not on API answers", async () => {
    const login = await httpsRequest(`${base}/ui/login`);
    expect(login.status).toBe(200);
    expect(login.headers["strict-transport-security"]).toBe("max-age=31536000");
    const authorize = await httpsRequest(`${base}/oauth/v2/authorize?client_id=nobody`);
    expect(authorize.status).toBe(400);
    expect(authorize.headers["strict-transport-security"]).toBe("max-age=31536000");
    const endSession = await httpsRequest(`${base}/oidc/v1/end_session`);
    expect(endSession.headers["strict-transport-security"]).toBe("max-age=31536000");
    expect((await httpsRequest(`${base}/healthz`)).headers["strict-transport-security"]).toBeUndefined();
    expect((await httpsRequest(`${base}/.well-known/openid-configuration`)).headers["strict-transport-security"]).toBeUndefined();
  });

  it("serves the login UI to a browser over https (h2): signs in with Secure cookies", async () => {
    const password = "Password1!";
    const create = await httpsRequest(`${base}/resources/v3alpha/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.adminPat}`, "content-type": "application/json" },
      body: JSON.stringify({
        username: "tls-user",
        human: { profile: { givenName: "Tee", familyName: "Ls" }, email: { address: "tls@example.com", isVerified: true }, password: { password } },
      }),
    });
    expect(create.status).toBe(201);
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const ctx = await browser.newContext({ ignoreHTTPSErrors: true, javaScriptEnabled: true });
      const page = await ctx.newPage();
      const response = await page.goto(`${base}/ui/login`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()["strict-transport-security"]).toBe("max-age=31536000");
      expect(await page.evaluate(() => (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).nextHopProtocol)).toBe("h2");
      await page.fill("#loginName", "tls-user");
      await page.click("button[type=submit]");
      await page.fill("#password", password);
      await page.click("button[type=submit]");
      expect(await page.textContent("main")).toContain("Signed in as");
      const cookies = await ctx.cookies(base);
      expect(cookies.length).toBeGreaterThan(0);
      for (const c of cookies) expect(c.secure, c.name).toBe(true);
    } finally {
      await browser?.close();
    }
  });

  it("picks up a renewed certificate for new connections without a restart; keeps the old one for a key that does not match", async () => {
    // An h2 session opened before the renewal keeps working after it.
    const before = http2.connect(base, { ca, servername: "localhost" });
    const healthz = (s: http2.ClientHttp2Session) =>
      new Promise<number>((resolve, reject) => {
        const r = s.request({ ":path": "/healthz" });
        r.on("response", (h) => resolve(Number(h[":status"])));
        r.on("error", reject);
        r.resume();
      });
    try {
      expect(await healthz(before)).toBe(200);
      const second = issue("second", 8193);
      publish(second.cert, second.key);
      const renewed = await until(
        () => handshake(["h2"]),
        (h) => h.serial === second.serial,
      );
      expect(renewed).toMatchObject({ serial: second.serial, subject: "second" });
      expect((await grpcOverTls()).settings?.defaultLanguage?.value).toBe("en");
      expect(await healthz(before)).toBe(200);

      // A certificate with another's key: refused with a warning, the second certificate keeps serving.
      const third = issue("third", 12289);
      const stranger = issue("stranger", 16385);
      publish(third.cert, stranger.key);
      const warned = await until(
        async () => logs.join(""),
        (text) => text.includes("not reloaded"),
      );
      const line = JSON.parse(warned.split("\n").find((l) => l.includes("not reloaded"))!);
      expect(line.level).toBe(40);
      expect(line.reason).toMatch(/^SVC_TLS_KEY \S+tls\.key is not the key of the certificate in SVC_TLS_CERT \S+tls\.crt$/);
      expect((await handshake(["h2"])).serial).toBe(second.serial);

      // Once the key matches, the third is served.
      publish(third.cert, third.key);
      expect(
        (
          await until(
            () => handshake(["http/1.1"]),
            (h) => h.serial === third.serial,
          )
        ).serial,
      ).toBe(third.serial);
    } finally {
      before.close();
    }
  });

  it("on close finishes a request in flight over TLS, refuses new connections, and stops watching", async () => {
    const socket = tls.connect({ host: "127.0.0.1", port: t.port, ca, servername: "localhost", ALPNProtocols: ["http/1.1"] });
    await new Promise((r) => socket.once("secureConnect", r));
    let response = "";
    let answeredAt = 0;
    let continued!: () => void;
    const hundred = new Promise<void>((r) => (continued = r));
    socket.on("data", (d) => {
      response += d.toString();
      if (response.startsWith("HTTP/1.1 100") && response.includes("\r\n\r\n")) {
        response = response.slice(response.indexOf("\r\n\r\n") + 4);
        continued();
      } else if (response) answeredAt ||= Date.now();
    });
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    const body = JSON.stringify({ defaultLanguage: { key: "fr" } });
    socket.write(
      `PATCH /settings/v3alpha/languages HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nAuthorization: Bearer ${t.adminPat}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 10)}`,
    );
    await hundred;
    const closing = t.server.close();
    await expect(handshake(["h2"])).rejects.toThrow();
    socket.write(body.slice(10));
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 200/);
    // The keep-alive TLS connection is closed once idle, not at the end of the grace period; so is the server.
    expect(Date.now() - answeredAt).toBeLessThan(10_000);
    await closing;
    // The watcher is gone: a change of the files after close does nothing (and nothing keeps the process alive).
    publish(first.cert, first.key);
  });
});

describe("without TLS", () => {
  it("serves cleartext as before, without Strict-Transport-Security", async () => {
    const plain = await startTestServer();
    try {
      expect(plain.server.url).toMatch(/^http:\/\//);
      const login = await rest(plain.url, "GET", "/ui/login");
      expect(login.status).toBe(200);
      expect(login.headers["strict-transport-security"]).toBeUndefined();
      const authorize = await rest(plain.url, "GET", "/oauth/v2/authorize?client_id=nobody");
      expect(authorize.headers["strict-transport-security"]).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});
