import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { TEST_MASTERKEY } from "../support/database.js";
import { until } from "../support/machine.js";
import { type PrivatePostgres, startPrivatePostgres, ownPostgresRunsHere } from "../support/private-postgres.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { MailServer } from "../support/smtp.js";

/**
 * The database goes away while a message is being sent (issue 32, point 2): the mail server has accepted it, the
 * record of that is lost with the transaction. Once the database is back the message is recorded as sent, and not
 * sent again.
 */
let db: PrivatePostgres;
let mail: MailServer;
let t: TestServer;

beforeAll(async () => {
  if (!ownPostgresRunsHere) return;
  db = await startPrivatePostgres();
  mail = await new MailServer().start();
  t = await startTestServer({
    DATABASE_URL: db.url,
    SVC_MASTERKEY: TEST_MASTERKEY,
    SVC_SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
    SVC_SMTP_FROM: "iam@example.com",
  });
}, 60_000);
afterAll(async () => {
  await t?.close().catch(() => {});
  await mail?.stop();
  db?.remove();
});

async function messageStatus(userId: string): Promise<string[]> {
  return (await db.query<{ status: string }>("SELECT status FROM notification_messages WHERE user_id = $1", [userId])).map((r) => r.status);
}

describe.skipIf(!ownPostgresRunsHere)("a message sent while the database goes away", () => {
  it("is recorded as sent once the database is back, and not sent again", async () => {
    let stopped = false;
    mail.beforeAccept = () => {
      mail.beforeAccept = undefined;
      // the server's transaction is open with the message claimed; it will not commit
      db.stop();
      stopped = true;
    };
    const created = await rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${t.defaultOrgId}`, {
      token: t.adminPat,
      body: { username: "outage", human: { profile: { givenName: "Out", familyName: "Age" }, email: { address: "outage@example.com" } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await mail.waitFor(1);
    expect(stopped).toBe(true);
    db.start();
    await until("the message recorded as sent", async () => ((await messageStatus(created.body.details.id)).join() === "sent" ? true : undefined), 15_000);
    // a second claim would have come within the retry's first second
    await new Promise((r) => setTimeout(r, 2500));
    expect(mail.received.map((m) => m.to)).toEqual([["outage@example.com"]]);
  }, 60_000);
});
