import type { EventStore, StoredEvent, Tx } from "../eventstore/eventstore.js";
import {
  emailCodeAdded,
  emailVerified,
  humanChanged,
  orgRemoved,
  passwordChanged,
  passwordCodeAdded,
  phoneCodeAdded,
  phoneVerified,
  otpEmailAdded,
  otpEmailCheckSucceeded,
  otpEmailCodeAdded,
  otpEmailRemoved,
  otpSmsAdded,
  otpSmsCheckSucceeded,
  otpSmsCodeAdded,
  otpSmsRemoved,
  unlockCodeAdded,
  userCodeFailed,
  userRemoved,
  userUnlocked,
} from "./events.js";
import { type CodeKind, MAX_CODE_FAILURES } from "./user-codes.js";

/** The `user_codes` projection (src/command/user-codes.ts): the pending code per user and kind. */
export function registerUserCodeReducers(es: EventStore): void {
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
    // A user's details (sequence, change date) are those of its newest event, this one included.
    await tx.user.update({ where: { id: e.aggregateId }, data: { sequence: e.sequence, changeDate: e.createdAt } });
  };
  const drop = (tx: Tx, userId: string, kind: CodeKind) => tx.userCode.deleteMany({ where: { userId, kind } });
  es.on(emailCodeAdded, (tx, e) => keep(tx, e, "email"));
  es.on(phoneCodeAdded, (tx, e) => keep(tx, e, "phone"));
  es.on(passwordCodeAdded, (tx, e) => keep(tx, e, "password"));
  es.on(unlockCodeAdded, (tx, e) => keep(tx, e, "unlock"));
  es.on(otpEmailCodeAdded, (tx, e) => keep(tx, e, "otp_email"));
  es.on(otpSmsCodeAdded, (tx, e) => keep(tx, e, "otp_sms"));
  es.on(userCodeFailed, async (tx, e) => {
    const kind = e.payload.kind as CodeKind;
    const row = await tx.userCode.update({ where: { userId_kind: { userId: e.aggregateId, kind } }, data: { failures: { increment: 1 } } });
    if (row.failures >= MAX_CODE_FAILURES) await drop(tx, e.aggregateId, kind);
    await tx.user.update({ where: { id: e.aggregateId }, data: { sequence: e.sequence, changeDate: e.createdAt } });
  });
  es.on(otpEmailCheckSucceeded, async (tx, e) => {
    await drop(tx, e.aggregateId, "otp_email");
  });
  es.on(otpSmsCheckSucceeded, async (tx, e) => {
    await drop(tx, e.aggregateId, "otp_sms");
  });

  // The one-time-code factors a user turned on.
  const channelOn = (channel: string) => async (tx: Tx, e: StoredEvent<object>) => {
    const data = { instanceId: e.instanceId, orgId: e.resourceOwner };
    await tx.userOtpChannel.upsert({
      where: { userId_channel: { userId: e.aggregateId, channel } },
      create: { userId: e.aggregateId, channel, ...data },
      update: data,
    });
  };
  const channelOff = (channel: string) => async (tx: Tx, e: StoredEvent<object>) => {
    await tx.userOtpChannel.deleteMany({ where: { userId: e.aggregateId, channel } });
  };
  es.on(otpEmailAdded, channelOn("email"));
  es.on(otpEmailRemoved, channelOff("email"));
  es.on(otpSmsAdded, channelOn("sms"));
  es.on(otpSmsRemoved, channelOff("sms"));
  // However the user was unlocked (the mailed link, an administrator, the lockout's time), the link is done.
  es.on(userUnlocked, async (tx, e) => {
    await drop(tx, e.aggregateId, "unlock");
  });

  // A used code is gone, and the address it proved is verified.
  es.on(emailVerified, async (tx, e) => {
    await drop(tx, e.aggregateId, "email");
    await tx.user.update({ where: { id: e.aggregateId }, data: { emailVerified: true, sequence: e.sequence, changeDate: e.createdAt } });
  });
  es.on(phoneVerified, async (tx, e) => {
    await drop(tx, e.aggregateId, "phone");
    await tx.user.update({ where: { id: e.aggregateId }, data: { phoneVerified: true, sequence: e.sequence, changeDate: e.createdAt } });
  });
  // Any new password (not a rehash of the same one) ends a pending reset or initial-password code.
  es.on(passwordChanged, async (tx, e) => {
    if (!e.payload.rehashed) await drop(tx, e.aggregateId, "password");
  });
  // A code proves only the address it was sent to.
  es.on(humanChanged, async (tx, e) => {
    if (e.payload.email !== undefined || e.payload.emailVerified) await drop(tx, e.aggregateId, "email");
    if (e.payload.phone !== undefined || e.payload.phoneVerified) await drop(tx, e.aggregateId, "phone");
  });
  es.on(userRemoved, async (tx, e) => {
    await tx.userCode.deleteMany({ where: { userId: e.aggregateId } });
    await tx.userOtpChannel.deleteMany({ where: { userId: e.aggregateId } });
  });
  es.on(orgRemoved, async (tx, e) => {
    await tx.userCode.deleteMany({ where: { orgId: e.aggregateId } });
    await tx.userOtpChannel.deleteMany({ where: { orgId: e.aggregateId } });
  });
}
