import { type CodeKind, MAX_CODE_FAILURES } from "../domain/user-codes.js";
import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { usersOfOrg } from "./related.js";

const keep = async (tx: Tx, e: StoredEvent<{ code: string; expiresAt: string; reason?: string }>, kind: CodeKind) => {
  const data = {
    instanceId: e.instanceId,
    orgId: e.resourceOwner,
    code: e.payload.code,
    reason: e.payload.reason ?? "",
    expiresAt: new Date(e.payload.expiresAt),
    // A new code starts its own count of wrong tries.
    failures: 0,
  };
  await tx.userCode.upsert({ where: { userId_kind: { userId: e.aggregateId, kind } }, create: { userId: e.aggregateId, kind, ...data }, update: data });
};

const drop = async (tx: Tx, userId: string, kind: CodeKind) => {
  await tx.userCode.deleteMany({ where: { userId, kind } });
};

/** The pending code per user and kind (src/command/user-codes.ts). */
export const userCodes = defineProjection("userCode", 1, (on) => {
  on(events.emailCodeAdded, (tx, e) => keep(tx, e, "email"));
  on(events.phoneCodeAdded, (tx, e) => keep(tx, e, "phone"));
  on(events.passwordCodeAdded, (tx, e) => keep(tx, e, "password"));
  on(events.unlockCodeAdded, (tx, e) => keep(tx, e, "unlock"));
  on(events.otpEmailCodeAdded, (tx, e) => keep(tx, e, "otp_email"));
  on(events.otpSmsCodeAdded, (tx, e) => keep(tx, e, "otp_sms"));
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
