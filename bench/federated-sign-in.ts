// Server CPU per completed sign-in in the hosted login UI, three ways in the same run: a local password, an
// external OpenID Connect provider (oidc-provider, in this process, its development login and consent pages) and
// an LDAP directory (Debian's slapd, a process of its own). The server runs in a process of its own; its CPU is
// user + system time of that process (every thread: scrypt on libuv's pool too) from /proc/<pid>/stat, so the
// provider's and the directory's own time are not in it. The embedded PostgreSQL (the server's child processes)
// and slapd are shown beside it, apart. Each sign-in is a new browser here (no cookies of this server; the
// provider keeps its session per worker, as a browser signed in at the company's provider does), driven over
// HTTP as a browser would: the login page's CSRF cookie and field, 303s followed, forms posted.
//   node --import tsx bench/federated-sign-in.ts
// BENCH_SIGNINS: sign-ins measured per case (default 240, in 3 rounds of the three cases in turn);
// BENCH_CONCURRENCY: browsers at a time (default 4); BENCH_CASES: some of local,oidc,ldap (default all; ldap
// needs /usr/sbin/slapd); BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when the run ends.
import http from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashPassword, verifyPassword } from "../src/crypto/password.js";
import { type LdapUser, slapdAvailable, startSlapd } from "../test/support/slapd.js";
import { cpuSeconds, serverCpuSeconds } from "./cpu.js";
import { startProcess } from "./load.js";

const signIns = Number(process.env.BENCH_SIGNINS ?? 240);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);
const rounds = 3;
const warmUp = Math.max(concurrency * 5, 20);
const cases = new Set((process.env.BENCH_CASES ?? "local,oidc,ldap").split(","));
if (cases.has("ldap") && !slapdAvailable) {
  console.log("no /usr/sbin/slapd: the LDAP case is left out");
  cases.delete("ldap");
}
const password = "Bench!password1";

// ---- a browser over HTTP: cookies by origin and path, 303s followed, forms posted from the page they are on ----

interface Page {
  url: URL;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Cookie {
  name: string;
  value: string;
  path: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

class Browser {
  private readonly jar = new Map<string, Cookie[]>();

  /** Forgets the cookies of one origin: the next request there is a new browser's. */
  forget(origin: string) {
    this.jar.delete(origin);
  }

  private cookieHeader(url: URL): string {
    return (this.jar.get(url.origin) ?? [])
      .filter((c) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  private store(url: URL, setCookie: string[] | undefined) {
    for (const line of setCookie ?? []) {
      const [pair, ...attrs] = line.split(";").map((s) => s.trim());
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      let path = "/";
      let gone = value === "";
      for (const a of attrs) {
        const [k, v = ""] = a.split("=");
        const key = k!.toLowerCase();
        if (key === "path") path = v;
        if (key === "max-age" && Number(v) <= 0) gone = true;
        if (key === "expires" && Date.parse(v) < Date.now()) gone = true;
      }
      const kept = (this.jar.get(url.origin) ?? []).filter((c) => !(c.name === name && c.path === path));
      if (!gone) kept.push({ name, value, path });
      this.jar.set(url.origin, kept);
    }
  }

  /** One request; a form is posted as a same-origin form post is (Origin and Sec-Fetch-Site). */
  request(method: "GET" | "POST", url: URL, form?: Record<string, string>): Promise<Page> {
    const headers: Record<string, string> = { accept: "text/html", "accept-language": "en" };
    const cookie = this.cookieHeader(url);
    if (cookie) headers.cookie = cookie;
    const body = form ? new URLSearchParams(form).toString() : undefined;
    if (body !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      headers.origin = url.origin;
      headers["sec-fetch-site"] = "same-origin";
    }
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method, headers, agent }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => {
          this.store(url, res.headers["set-cookie"]);
          resolve({ url, status: res.statusCode ?? 0, headers: res.headers, body: text });
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  /** The request, then its redirects (as GETs, and a page's refresh as a browser follows it) to the page they end at. */
  async go(method: "GET" | "POST", url: URL, form?: Record<string, string>): Promise<Page> {
    let page = await this.request(method, url, form);
    for (let hops = 0; ; hops++) {
      if (hops > 10) throw new Error(`more than 10 redirects from ${url.href}`);
      const refresh = page.status === 200 ? /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(page.body)?.[1] : undefined;
      const next = page.status >= 300 && page.status < 400 ? page.headers.location : refresh && unescapeHtml(refresh);
      if (!next) return page;
      page = await this.request("GET", new URL(next, page.url));
    }
  }

  /** Posts the form of `page` whose action (and fields) `pick` accepts, with `fill` over its fields. */
  submit(page: Page, pick: (f: Form) => boolean, fill: Record<string, string> = {}): Promise<Page> {
    const form = formsOf(page.body).find(pick);
    if (!form) throw new Error(`no such form on ${page.url.href} (${page.status}): ${page.body.slice(0, 400)}`);
    return this.go("POST", new URL(form.action, page.url), { ...form.fields, ...fill });
  }
}

interface Form {
  action: string;
  fields: Record<string, string>;
}

const unescapeHtml = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#x27": "'" })[e]!);
const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescapeHtml(m[1]!) : undefined;
};

/** The page's forms: action and the named inputs' values. */
function formsOf(html: string): Form[] {
  const forms: Form[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const fields: Record<string, string> = {};
    for (const input of m[2]!.matchAll(/<input\b[^>]*>/g)) {
      const name = attr(input[0], "name");
      if (name) fields[name] = attr(input[0], "value") ?? "";
    }
    forms.push({ action: attr(m[1]!, "action") ?? "", fields });
  }
  return forms;
}

/** The signed-in page of the login UI (its logout link); else the sign-in did not complete. */
function signedIn(page: Page, what: string) {
  if (page.status !== 200 || !page.body.includes('href="/ui/login/logout"')) {
    throw new Error(`${what}: ended at ${page.url.href} with ${page.status}: ${page.body.replace(/<[^>]+>/g, " ").slice(0, 300)}`);
  }
}

// ---- CPU of the server's processes ----

/** Parent of every process on the machine. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      out.set(Number(pid), Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]));
    } catch {
      // gone in between
    }
  }
  return out;
}

/** CPU seconds of the processes below `root` (the embedded PostgreSQL below the server; slapd below this process), by PID. */
function descendantsCpu(root: number, comm?: string): Map<number, number> {
  const ppid = parents();
  const out = new Map<number, number>();
  for (const pid of ppid.keys()) {
    let p: number | undefined = ppid.get(pid);
    while (p !== undefined && p > 1 && p !== root) p = ppid.get(p);
    if (p !== root) continue;
    try {
      if (comm && readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== comm) continue;
    } catch {
      continue;
    }
    out.set(pid, cpuSeconds(pid));
  }
  return out;
}
const since = (before: Map<number, number>, now: Map<number, number>) => [...now].reduce((sum, [pid, s]) => sum + s - (before.get(pid) ?? 0), 0);

// ---- the server, the provider, the directory ----

const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-fed-"));
const env: Record<string, string> = {
  SVC_PORT: "0",
  SVC_HOST: "127.0.0.1",
  SVC_DATA_DIR: dataDir,
  SVC_LOG_LEVEL: "warn",
  // as test/support/server.ts: many sign-ins from one address; providers on loopback over plain http
  SVC_RATE_LIMIT_SIGNIN_FAILURES_ADDRESS: "off",
  SVC_RATE_LIMIT_SIGNIN_FAILURES_ACCOUNT: "off",
  SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS: "off",
  SVC_TARGET_DENY: "none",
  SVC_IDP_INSECURE_HTTP: "on",
};
const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const server = await startProcess(["src/main.ts"], env, /listening on (http:\/\/\S+)/, profile);
const pid = server.child.pid!;
const base = new URL(server.url);
const pat = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
// oidc-provider's notes on its development defaults (in-memory store, keys, login pages): what the stand-in is meant to be.
for (const level of ["info", "warn"] as const) {
  const write = console[level].bind(console);
  console[level] = (...args: unknown[]) => {
    if (!String(args[0]).includes("oidc-provider ")) write(...args);
  };
}
// Imported after that: oidc-provider says what it thinks of the runtime when it loads.
const { startExternalOp } = await import("../test/support/external-op.js");
const op = cases.has("oidc") ? await startExternalOp(`${server.url}/idps/callback`) : undefined;
const ldapUsers: LdapUser[] = Array.from({ length: concurrency }, (_, i) => ({
  uid: `ldap-${i}`,
  password: `ldap-Secret-${i}`,
  givenName: "Ldap",
  sn: `User${i}`,
  cn: `Ldap User${i}`,
  mail: `ldap-${i}@ldap.example.com`,
}));
const slapd = cases.has("ldap") ? await startSlapd(ldapUsers) : undefined;

async function api(path: string, body: unknown): Promise<{ details: { id: string } }> {
  const r = await fetch(new URL(`/resources/v3alpha${path}`, base), {
    method: "POST",
    headers: { authorization: `Bearer ${pat}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const out = await r.json();
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(out)}`);
  return out;
}

/** The login page's button of a provider, posted: where it leads (the provider, or the directory's form). */
async function startAt(b: Browser, idpId: string): Promise<Page> {
  const login = await b.go("GET", new URL("/ui/login", base));
  return b.submit(login, (f) => f.action === "/ui/login/idp/start" && f.fields.idpId === idpId);
}

type Case = { name: string; key: string; once: (b: Browser, worker: number) => Promise<void> };
const all: Case[] = [];

if (cases.has("local")) {
  for (let i = 0; i < concurrency; i++) {
    await api("/users", {
      username: `local-${i}`,
      human: {
        profile: { givenName: "Local", familyName: `User${i}` },
        email: { address: `local-${i}@example.com`, isVerified: true },
        password: { password },
      },
    });
  }
  all.push({
    name: "local password",
    key: "local",
    once: async (b, w) => {
      const login = await b.go("GET", new URL("/ui/login", base));
      const pw = await b.submit(login, (f) => f.action === "/ui/login/loginname", { loginName: `local-${w}` });
      signedIn(await b.submit(pw, (f) => f.action === "/ui/login/password", { password }), "local password");
    },
  });
}

if (op) {
  const { details } = await api("/idps/oidc", {
    idp: { name: "Bench OP", options: { isAutoCreation: true } },
    config: { issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, scopes: ["openid", "email", "profile"], use_pkce: true },
  });
  all.push({
    name: "external OIDC provider",
    key: "oidc",
    once: async (b, w) => {
      let page = await startAt(b, details.id);
      // At the provider: its login form (any password; the login is the account), its consent form on a first
      // sign-in there; later sign-ins of the same browser go straight back.
      for (let steps = 0; page.url.origin === op.issuer; steps++) {
        if (steps > 5) throw new Error(`stuck at the provider: ${page.url.href} ${page.status}`);
        page = await b.submit(page, () => true, { login: `oidc-${w}`, password: "anything" });
      }
      signedIn(page, "external OIDC provider");
    },
  });
}

if (slapd) {
  const { details } = await api("/idps/ldap", {
    idp: { name: "Bench Directory", options: { isAutoCreation: true } },
    config: {
      servers: [slapd.url],
      base_dn: slapd.baseDn,
      bind_dn: slapd.bindDn,
      bind_password: slapd.bindPassword,
      user_base: slapd.userBase,
      user_object_classes: ["inetOrgPerson"],
      user_filters: ["uid"],
      timeout: "5s",
      attributes: { id_attribute: "uid", first_name_attribute: "givenName", last_name_attribute: "sn", email_attribute: "mail" },
    },
  });
  all.push({
    name: "LDAP directory",
    key: "ldap",
    once: async (b, w) => {
      const form = await startAt(b, details.id);
      const u = ldapUsers[w]!;
      signedIn(await b.submit(form, (f) => f.action === "/ui/login/ldap", { loginName: u.uid, password: u.password }), "LDAP directory");
    },
  });
}

// ---- the run ----

interface Totals {
  n: number;
  wall: number;
  server: number;
  db: number;
  slapd: number;
}

const browsers = Array.from({ length: concurrency }, () => new Browser());

/** `n` sign-ins of a case, `concurrency` browsers at a time, each a new one at this server. */
async function run(c: Case, n: number): Promise<Totals> {
  const before = { server: serverCpuSeconds(pid), db: descendantsCpu(pid, "postgres"), slapd: descendantsCpu(process.pid, "slapd") };
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    browsers.map(async (b, w) => {
      while (next++ < n) {
        b.forget(base.origin);
        await c.once(b, w);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  return {
    n,
    wall,
    server: serverCpuSeconds(pid) - before.server,
    db: since(before.db, descendantsCpu(pid, "postgres")),
    slapd: since(before.slapd, descendantsCpu(process.pid, "slapd")),
  };
}

let hashCpuMs = 0;
try {
  // What one verification of the default hash costs in CPU, in this process, as many at a time as the browsers
  // below: an estimate of the local sign-in's share (the server runs the same code on its own thread pool).
  const hash = await hashPassword(password);
  await verifyPassword(password, hash);
  const u0 = process.cpuUsage();
  const verifications = 5 * concurrency;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < verifications / concurrency; i++) await verifyPassword(password, hash);
    }),
  );
  const u = process.cpuUsage(u0);
  hashCpuMs = (u.user + u.system) / 1000 / verifications;

  // Warm-up: the accounts of the providers are created and linked here; the JIT gets the paths.
  for (const c of all) await run(c, warmUp);
  // The server's own CPU when nothing is asked of it (workers, polling, timers): in every figure below too.
  const idle0 = serverCpuSeconds(pid);
  await new Promise((r) => setTimeout(r, 3000));
  const idleMsPerS = ((serverCpuSeconds(pid) - idle0) * 1000) / 3;
  const totals = new Map<string, Totals>(all.map((c) => [c.key, { n: 0, wall: 0, server: 0, db: 0, slapd: 0 }]));
  for (let r = 0; r < rounds; r++) {
    for (const c of all) {
      const t = await run(c, Math.ceil(signIns / rounds));
      const sum = totals.get(c.key)!;
      for (const k of Object.keys(t) as (keyof Totals)[]) sum[k] += t[k];
    }
  }

  const perSignIn = (t: Totals, s: number) => (s * 1000) / t.n;
  const local = totals.get("local");
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(
    `\nServer CPU per completed sign-in in the login UI (${concurrency} browsers at a time, ${rounds} rounds, after ${warmUp} warm-up sign-ins each; ` +
      `the server's processes: user + system of /proc/<pid>/stat of ${pid} and its workers)`,
  );
  console.log(
    `${pad("sign-in", 24)} ${pad("sign-ins", 9)} ${pad("wall s", 8)} ${pad("sign-ins/s", 11)} ${pad("server CPU ms", 14)} ${pad("vs local", 9)} ` +
      `${pad("less idle ms", 13)} ${pad("PostgreSQL ms", 14)} slapd ms`,
  );
  for (const c of all) {
    const t = totals.get(c.key)!;
    const cpu = perSignIn(t, t.server);
    console.log(
      `${pad(c.name, 24)} ${pad(String(t.n), 9)} ${pad(t.wall.toFixed(1), 8)} ${pad((t.n / t.wall).toFixed(1), 11)} ${pad(cpu.toFixed(2), 14)} ` +
        `${pad(local ? `x${(cpu / perSignIn(local, local.server)).toFixed(2)}` : "-", 9)} ${pad((cpu - (idleMsPerS * t.wall) / t.n).toFixed(2), 13)} ` +
        `${pad(perSignIn(t, t.db).toFixed(2), 14)} ${c.key === "ldap" ? perSignIn(t, t.slapd).toFixed(2) : "-"}`,
    );
  }
  console.log(
    `\nserver CPU ms: per completed sign-in; less idle: without the server's idle CPU over the same wall time (${idleMsPerS.toFixed(1)} ms/s, ` +
      "3 s measured after the warm-up); PostgreSQL: the embedded database's processes; slapd: the directory's own (not the server's)",
  );
  console.log(
    `one verification of the default password hash (scrypt N=2^15 r=8 p=1, as bench/passwords.ts), in this process, ${concurrency} at a time: ` +
      `${hashCpuMs.toFixed(1)} ms CPU. The local sign-in's CPU is mostly that deliberate cost; the federated ones verify no local password.`,
  );
  if (local) {
    const rest = perSignIn(local, local.server) - hashCpuMs;
    const ratios = all
      .filter((c) => c.key !== "local")
      .map((c) => {
        const t = totals.get(c.key)!;
        return `${c.name} x${(perSignIn(t, t.server) / rest).toFixed(2)}`;
      });
    console.log(`local password sign-in without the hash (estimate): ${rest.toFixed(2)} ms CPU${ratios.length ? `; against it: ${ratios.join(", ")}` : ""}`);
  }
} finally {
  const exited = new Promise((r) => server.child.once("exit", r));
  server.child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  await op?.close();
  await slapd?.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}
