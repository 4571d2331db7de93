import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client, EqualityFilter } from "ldapts";

export interface LdapUser {
  uid: string;
  password: string;
  givenName: string;
  sn: string;
  cn: string;
  mail?: string;
}

/**
 * A real OpenLDAP server (Debian's slapd) for LDAP sign-in tests: its own temporary directory (configuration,
 * mdb database, a generated CA and server certificate), unprivileged loopback ports, nothing of the system's
 * configuration used. Anonymous clients may only bind; the service account `bindDn` reads everything but
 * passwords; users bind with their own passwords.
 */
export interface Slapd {
  /** ldap://127.0.0.1:<port> (plain; StartTLS offered on it) */
  url: string;
  /** ldaps://localhost:<port2> (TLS from the first byte; certificate for DNS name localhost and IP 127.0.0.1) */
  ldapsUrl: string;
  /** PEM of the generated CA that signed the server certificate (tests trust it explicitly) */
  caPem: string;
  baseDn: string;
  userBase: string;
  /** A service account allowed to search. */
  bindDn: string;
  bindPassword: string;
  users: LdapUser[];
  /** Adds a user under userBase (e.g. to test a second one); resolves when it is searchable. */
  addUser(u: LdapUser): Promise<void>;
  stop(): Promise<void>;
}

const slapdPath = "/usr/sbin/slapd";

/** Whether slapd is installed (tests skip locally without it; CI installs it, .ci/run). */
export const slapdAvailable: boolean = existsSync(slapdPath);

const baseDn = "dc=example,dc=org";
const userBase = `ou=people,${baseDn}`;
const adminDn = `cn=admin,${baseDn}`;
const adminPassword = "admin-Secret-1";
const bindDn = `cn=svc,${baseDn}`;
const bindPassword = "svc-Secret-1";

const defaultUsers: LdapUser[] = [
  { uid: "alice", password: "alice-Secret-1", givenName: "Alice", sn: "Liddell", cn: "Alice Liddell", mail: "alice@ldap.example.com" },
  { uid: "bob", password: "bob-Secret-1", givenName: "Bob", sn: "Builder", cn: "Bob Builder", mail: "bob@ldap.example.com" },
  { uid: "carol", password: "carol-Secret-1", givenName: "Carol", sn: "Singer", cn: "Carol Singer" },
];

const run = promisify(execFile);

/** The servers still running, stopped at the latest when the process exits (a crashed test leaves none behind). */
const running = new Map<ChildProcess, string>();
let exitHook = false;

/** Starts slapd with `users` (default alice, bob and carol, the last without mail) and waits until it answers. */
export async function startSlapd(users: LdapUser[] = defaultUsers): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), "svc-slapd-"));
  try {
    const caPem = await makeCertificates(dir);
    writeFileSync(join(dir, "slapd.conf"), config(dir));
    mkdirSync(join(dir, "db"));
    await run("/usr/sbin/slapadd", ["-q", "-f", join(dir, "slapd.conf"), "-l", seedLdif(dir, users)]);
    const { child, port, tlsPort } = await launchRetrying(dir);
    const url = `ldap://127.0.0.1:${port}`;
    const added = [...users];
    return {
      url,
      ldapsUrl: `ldaps://localhost:${tlsPort}`,
      caPem,
      baseDn,
      userBase,
      bindDn,
      bindPassword,
      users: added,
      addUser: async (u) => {
        await addEntry(url, u);
        added.push(u);
      },
      stop: () => stop(child, dir),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** A CA and a server certificate (localhost, 127.0.0.1) signed by it, made with the openssl command; returns the CA's PEM. */
async function makeCertificates(dir: string): Promise<string> {
  const f = (name: string) => join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", ["req", "-x509", ...ec, "-keyout", f("ca.key"), "-out", f("ca.pem"), "-days", "2", "-subj", "/CN=svc test LDAP CA"]);
  await run("openssl", ["req", "-new", ...ec, "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=localhost"]);
  writeFileSync(f("server.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    f("server.csr"),
    "-CA",
    f("ca.pem"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    f("server.ext"),
    "-out",
    f("server.pem"),
  ]);
  return readFileSync(f("ca.pem"), "utf8");
}

function config(dir: string): string {
  return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile ${join(dir, "slapd.pid")}
argsfile ${join(dir, "slapd.args")}
modulepath /usr/lib/ldap
moduleload back_mdb
TLSCACertificateFile ${join(dir, "ca.pem")}
TLSCertificateFile ${join(dir, "server.pem")}
TLSCertificateKeyFile ${join(dir, "server.key")}

database mdb
suffix "${baseDn}"
rootdn "${adminDn}"
rootpw ${ssha(adminPassword)}
directory ${join(dir, "db")}
access to attrs=userPassword by anonymous auth by * none
access to * by dn.exact="${bindDn}" read by self read by * none
`;
}

/** The base entries, the service account and `users`, as an LDIF file for slapadd; returns its path. */
function seedLdif(dir: string, users: LdapUser[]): string {
  const entries = [
    `dn: ${baseDn}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n`,
    `dn: ${userBase}\nobjectClass: organizationalUnit\nou: people\n`,
    `dn: ${bindDn}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: svc\nuserPassword: ${ssha(bindPassword)}\n`,
    ...users.map((u) => ldifEntry(userDn(u), userAttributes(u))),
  ];
  const path = join(dir, "seed.ldif");
  writeFileSync(path, entries.join("\n"));
  return path;
}

function ldifEntry(dn: string, attributes: Record<string, string>): string {
  return `dn: ${dn}\n${Object.entries(attributes)
    .map(([k, v]) => `${k}: ${v}\n`)
    .join("")}`;
}

function userDn(u: LdapUser): string {
  return `uid=${u.uid},${userBase}`;
}

function userAttributes(u: LdapUser): Record<string, string> {
  return {
    objectClass: "inetOrgPerson",
    uid: u.uid,
    cn: u.cn,
    sn: u.sn,
    givenName: u.givenName,
    ...(u.mail ? { mail: u.mail } : {}),
    userPassword: ssha(u.password),
  };
}

/** RFC 2307 {SSHA}: base64(SHA-1(password + salt) + salt). */
function ssha(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash("sha1").update(password).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString("base64")}`;
}

async function addEntry(url: string, u: LdapUser): Promise<void> {
  const client = new Client({ url });
  try {
    await client.bind(adminDn, adminPassword);
    await client.add(userDn(u), userAttributes(u));
    await client.bind(bindDn, bindPassword);
    const { searchEntries } = await client.search(userBase, { filter: new EqualityFilter({ attribute: "uid", value: u.uid }) });
    if (searchEntries.length !== 1) throw new Error(`added ${userDn(u)} but a search finds ${searchEntries.length} entries`);
  } finally {
    await client.unbind();
  }
}

/** Two ports free a moment ago may be taken by the time slapd binds them: one more try with two others. */
async function launchRetrying(dir: string): Promise<{ child: ChildProcess; port: number; tlsPort: number }> {
  try {
    return await launch(dir);
  } catch (err) {
    if (!(err instanceof PortTaken)) throw err;
    return launch(dir);
  }
}

class PortTaken extends Error {}

async function launch(dir: string): Promise<{ child: ChildProcess; port: number; tlsPort: number }> {
  const [port, tlsPort] = [await freePort(), await freePort()];
  const child = spawn(slapdPath, ["-d", "none", "-f", join(dir, "slapd.conf"), "-h", `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${tlsPort}/`], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  track(child, dir);
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (wrotePid(dir, child) && (await answers(`ldap://127.0.0.1:${port}`))) return { child, port, tlsPort };
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(child);
      const message = `slapd exited with ${child.exitCode ?? child.signalCode} before it answered:\n${output}`;
      throw /Address already in use|errno=98/.test(output) ? new PortTaken(message) : new Error(message);
    }
    if (Date.now() > deadline) {
      await stopProcess(child);
      running.delete(child);
      throw new Error(`slapd did not answer within 10 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether this slapd wrote its pid file, which it does after it has bound both ports (not another process that took one). */
function wrotePid(dir: string, child: ChildProcess): boolean {
  try {
    return readFileSync(join(dir, "slapd.pid"), "utf8").trim() === String(child.pid);
  } catch {
    return false;
  }
}

/** Whether an anonymous search of the root DSE succeeds. */
async function answers(url: string): Promise<boolean> {
  const client = new Client({ url, connectTimeout: 1000, timeout: 1000 });
  try {
    await client.search("", { scope: "base", filter: "(objectClass=*)" });
    return true;
  } catch {
    return false;
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function track(child: ChildProcess, dir: string): void {
  running.set(child, dir);
  if (exitHook) return;
  exitHook = true;
  process.on("exit", () => {
    for (const [c, d] of running) {
      c.kill("SIGKILL");
      rmSync(d, { recursive: true, force: true });
    }
  });
}

async function stop(child: ChildProcess, dir: string): Promise<void> {
  await stopProcess(child);
  running.delete(child);
  rmSync(dir, { recursive: true, force: true });
}

/** SIGTERM, then SIGKILL when slapd is still there after 2 s. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
  await exited;
  clearTimeout(timer);
}
