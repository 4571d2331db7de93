import { type CodeKind, MAX_CODE_FAILURES } from "../domain/user-codes.js";
import type { Sql, StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

/** The newest code of a kind replaces the one before; one statement without Prisma (every new human sends one). */
const keep = async (sql: Sql, e: StoredEvent<{ code: string; expiresAt: string; reason?: string }>, kind: CodeKind) => {
  await sql.query(
    `INSERT INTO user_codes (user_id, kind, instance_id, org_id, code, reason, expires_at, failures) VALUES ($1, $2, $3, $4, $5, $6, $7, 0)
     ON CONFLICT (user_id, kind) DO UPDATE SET instance_id = EXCLUDED.instance_id, org_id = EXCLUDED.org_id, code = EXCLUDED.code,
       reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at, failures = 0`,
    // A new code starts its own count of wrong tries.
    [e.aggregateId, kind, e.instanceId, e.resourceOwner, e.payload.code, e.payload.reason ?? "", new Date(e.payload.expiresAt)],
  );
};

const drop = async (tx: Tx, userId: string, kind: CodeKind) => {
  await tx.userCode.deleteMany({ where: { userId, kind } });
};

/** The pending code per user and kind (src/command/user-codes.ts). */
export const userCodes = defineProjection("userCode", 1, (on) => {
  on(events.emailCodeAdded, (_tx, e, sql) => keep(sql, e, "email"));
  on(events.phoneCodeAdded, (_tx, e, sql) => keep(sql, e, "phone"));
  on(events.passwordCodeAdded, (_tx, e, sql) => keep(sql, e, "password"));
  on(events.unlockCodeAdded, (_tx, e, sql) => keep(sql, e, "unlock"));
  on(events.otpEmailCodeAdded, (_tx, e, sql) => keep(sql, e, "otp_email"));
  on(events.otpSmsCodeAdded, (_tx, e, sql) => keep(sql, e, "otp_sms"));
  on(events.userCodeFailed, async (tx, e) => {
    const kind = e.payload.kind as CodeKind;
    const row = await tx.userCode.update({ where: { userId_kind: { userId: e.aggregateId, kind } }, data: { failures: { increment: 1 } } });
    if (row.failures >= MAX_CODE_FAILURES) await drop(tx, e.aggregateId, kind);
  });
  on(events.otpEmailCheckSucceeded, (tx, e) => drop(tx, e.aggregateId, "otp_email"));
  on(events.otpSmsCheckSucceeded, (tx, e) => drop(tx, e.aggregateId, "otp_sms"));
  // However the user was unlocked (the mailed link, an administrator, the lockout's time), the link is done.
  on(events.userUnlocked, (tx, e) => drop(tx, e.aggregateId, "unlock"));
  // A used code is gone (the address it proved is verified: user.ts).
  on(events.emailVerified, (tx, e) => drop(tx, e.aggregateId, "email"));
  on(events.phoneVerified, (tx, e) => drop(tx, e.aggregateId, "phone"));
  // Any new password (not a rehash of the same one) ends a pending reset or initial-password code.
  on(events.passwordChanged, async (tx, e) => {
    if (!e.payload.rehashed) await drop(tx, e.aggregateId, "password");
  });
  // A code proves only the address it was sent to.
  on(events.humanChanged, async (tx, e) => {
    if (e.payload.email !== undefined || e.payload.emailVerified) await drop(tx, e.aggregateId, "email");
    if (e.payload.phone !== undefined || e.payload.phoneVerified) await drop(tx, e.aggregateId, "phone");
  });
  on(events.userRemoved, async (tx, e) => {
    await tx.userCode.deleteMany({ where: { userId: e.aggregateId } });
  });
  // Reads the organisation's users: before users.
  on(events.orgRemoved, async (tx, e) => {
    await tx.userCode.deleteMany({ where: { userId: { in: await usersOfOrg(tx, e.aggregateId) } } });
    await tx.userCode.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
