import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { emailCodeAdded } from "../../src/events/index.js";
import { SecretBox } from "../../src/crypto/secrets.js";
import { EventStore } from "../../src/eventstore/eventstore.js";
import { openDatabase } from "../../src/storage/database.js";
import { loadMasterKey } from "../../src/storage/masterkey.js";
import { rest } from "../support/clients.js";
import { databaseEnv, freshPostgresDatabase, TEST_MASTERKEY } from "../support/database.js";
import { startServerProcess, type ServerProcess } from "../support/process.js";
import { MailServer } from "../support/smtp.js";

// Several processes on one database need PostgreSQL (the embedded one belongs to one process).
const onPostgres = !!process.env.TEST_DATABASE_URL;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function track(p: ServerProcess): ServerProcess {
  cleanups.push(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  });
  return p;
}

async function setUp(mail: MailServer) {
  const pgdb = await freshPostgresDatabase();
  cleanups.push(pgdb.drop);
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), "svc-notify-")));
  for (const d of dirs) cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  // the mail server is on loopback, which the default of SVC_TARGET_DENY denies (test/support/server.ts does the same)
  const env = (i: number) => ({ ...databaseEnv(pgdb), SVC_DATA_DIR: dirs[i]!, SVC_TARGET_DENY: "none" });
  const first = track(await startServerProcess(env(0)));
  const token = readFileSync(join(dirs[0]!, "admin.pat"), "utf8").trim();
  const smtp = await rest(first.url, "POST", "/resources/v3alpha/smtp_providers", {
    token,
    body: { host: "127.0.0.1", port: mail.port, tls: "SMTP_TLS_MODE_NONE", senderAddress: "iam@example.com" },
  });
  expect(smtp.status).toBe(201);
  await rest(first.url, "POST", `/resources/v3alpha/smtp_providers/${smtp.body.details.id}/_activate`, { token, body: {} });
  const users: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await rest(first.url, "POST", "/resources/v3alpha/users", {
      token,
      body: {
        username: `u${i}`,
        human: {
          profile: { givenName: `U${i}`, familyName: "T" },
          email: { address: `u${i}@example.com`, isVerified: true },
          password: { password: "Secr3t!pass" },
        },
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    users.push(r.body.details.id);
  }
  const db = await openDatabase({ databaseUrl: pgdb.url, dataDir: dirs[0]! });
  cleanups.push(() => db.close());
  const box = new SecretBox(await loadMasterKey(db, TEST_MASTERKEY, dirs[0]!));
  const es = new EventStore(db);
  const instance = await db.prisma.user.findFirstOrThrow({ where: { id: users[0]! } });
  /** What a flow's command appends: a sealed code for the user. */
  const appendCode = async (userId: string, code: string) => {
    await es.execute(async (w) => {
      await w.push(instance.instanceId, "test", [
        emailCodeAdded.event(
          { aggregateId: userId, resourceOwner: instance.orgId },
          { code: box.seal(code), expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
        ),
      ]);
    });
  };
  return { env, first, users, appendCode, db };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!onPostgres)("the notification worker across processes", () => {
  it("killed in the middle of a delivery, sends the message once after the restart", async () => {
    const mail = await new MailServer().start();
    cleanups.push(() => mail.stop());
    const { env, first, users, appendCode, db } = await setUp(mail);
    // The mail server takes the message but does not answer it until released: the server is killed then.
    mail.hold = true;
    await appendCode(users[0]!, "KILL01");
    await waitFor(async () => mail.held > 0);
    first.child.kill("SIGKILL");
    await first.exited;
    mail.hold = false;
    // the dropped connection's message was never accepted by the mail server
    expect(mail.received).toHaveLength(0);
    const row = await db.prisma.notificationMessage.findFirstOrThrow({ where: { userId: users[0]! } });
    expect(row.status).toBe("pending");

    track(await startServerProcess(env(0)));
    await waitFor(async () => mail.received.length >= 1);
    await waitFor(async () => (await db.prisma.notificationMessage.findFirstOrThrow({ where: { userId: users[0]! } })).status === "sent");
    await new Promise((r) => setTimeout(r, 1500));
    expect(mail.received.map((m) => m.to)).toEqual([[`u0@example.com`]]);
    expect(mail.received[0]!.raw).toContain("KILL01");
  });

  it("two processes on one database send each message once", async () => {
    const mail = await new MailServer().start();
    cleanups.push(() => mail.stop());
    mail.delayMs = 100;
    const { env, users, appendCode, db } = await setUp(mail);
    track(await startServerProcess(env(1)));
    const codes: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (const [i, u] of users.entries()) {
        const code = `R${round}U${i}`;
        codes.push(code);
        await appendCode(u, code);
      }
    }
    await waitFor(async () => (await db.prisma.notificationMessage.count({ where: { status: "sent" } })) === codes.length);
    await new Promise((r) => setTimeout(r, 1500));
    expect(mail.received).toHaveLength(codes.length);
    const sentCodes = mail.received.map((m) => /code=(?:3D)?(R\dU\d)/.exec(m.raw)?.[1]).sort();
    expect(sentCodes).toEqual([...codes].sort());
  });
});
