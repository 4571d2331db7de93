import { Code, ConnectError } from "@connectrpc/connect";
import type { SecretBox } from "../crypto/secrets.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { Database } from "../storage/database.js";
import type { ChangeDetails } from "./aggregate.js";
import {
  otpEmailAdded,
  otpEmailCheckSucceeded,
  otpEmailCodeAdded,
  otpEmailRemoved,
  otpSmsAdded,
  otpSmsCheckSucceeded,
  otpSmsCodeAdded,
  otpSmsRemoved,
} from "../events/index.js";
import { changeHuman } from "./humans.js";
import { type CodeKind, changeWithCode, newCode } from "./user-codes.js";

/**
 * One-time codes by e-mail and by SMS as second factors at sign-in (ZITADEL's "OTP Email" and "OTP SMS"):
 * a user turns a channel on (with a verified address), the login settings allow it (`otp_email`, `otp_sms`),
 * and each sign-in then sends a fresh code there, which the user types. The code is kept like the other codes
 * (src/command/user-codes.ts: sealed, single use) and works for five minutes.
 */
export type OtpChannel = "email" | "sms";

export const OTP_CODE_LIFETIME_MS = 5 * 60_000;

const events = {
  email: { added: otpEmailAdded, removed: otpEmailRemoved, code: otpEmailCodeAdded, checked: otpEmailCheckSucceeded },
  sms: { added: otpSmsAdded, removed: otpSmsRemoved, code: otpSmsCodeAdded, checked: otpSmsCheckSucceeded },
};
const codeKind = (channel: OtpChannel): CodeKind => (channel === "email" ? "otp_email" : "otp_sms");
/** The login settings' name of the factor. */
export const secondFactorOf = (channel: OtpChannel) => (channel === "email" ? "otp_email" : "otp_sms");

type Who = { instanceId: string; userId: string; creator: string };

/** Turns the channel on: FAILED_PRECONDITION without a verified address, ALREADY_EXISTS when it is on. */
export function addOtpChannel(es: EventStore, a: Who & { channel: OtpChannel }): Promise<ChangeDetails> {
  return changeHuman(es, a, `one-time codes by ${a.channel}`, async (u, w) => {
    const verified = a.channel === "email" ? !!u.email && u.emailVerified : !!u.phone && u.phoneVerified;
    if (!verified) {
      throw errors.failedPrecondition("OTPC-v3r1", `user "${u.id}" needs a verified ${a.channel === "email" ? "e-mail address" : "phone number"} first`);
    }
    const on = await w.tx.userOtpChannel.findUnique({ where: { userId_channel: { userId: u.id, channel: a.channel } } });
    if (on) throw errors.alreadyExists("OTPC-4dd3", `one-time codes by ${a.channel} are already on for user "${u.id}"`);
    return [events[a.channel].added.change()];
  });
}

export function removeOtpChannel(es: EventStore, a: Who & { channel: OtpChannel }): Promise<ChangeDetails> {
  return changeHuman(es, a, `one-time codes by ${a.channel}`, async (u, w) => {
    const on = await w.tx.userOtpChannel.findUnique({ where: { userId_channel: { userId: u.id, channel: a.channel } } });
    if (!on) throw errors.notFound("OTPC-n0ne", `one-time codes by ${a.channel} are not on for user "${u.id}"`);
    return [events[a.channel].removed.change()];
  });
}

/** The channels the user turned on that `allowed` (the login settings' second_factors) permits and whose address is verified. */
export async function loginCodeChannels(db: Database, allowed: readonly string[], instanceId: string, userId: string): Promise<OtpChannel[]> {
  const rows = await db.prisma.userOtpChannel.findMany({ where: { userId, instanceId } });
  if (!rows.length) return [];
  const user = await db.prisma.user.findUnique({ where: { id: userId } });
  const usable = (c: OtpChannel) => (c === "email" ? !!user?.email && user.emailVerified : !!user?.phone && user.phoneVerified);
  return (["email", "sms"] as const).filter((c) => allowed.includes(secondFactorOf(c)) && rows.some((r) => r.channel === c) && usable(c));
}

/** The first of them: the one the login UI sends a sign-in code to. */
export async function loginCodeChannel(db: Database, allowed: readonly string[], instanceId: string, userId: string): Promise<OtpChannel | undefined> {
  return (await loginCodeChannels(db, allowed, instanceId, userId))[0];
}

/** Sends a sign-in a fresh code on the channel (the notification worker delivers it). */
export async function sendLoginCode(es: EventStore, box: SecretBox, a: { instanceId: string; userId: string; channel: OtpChannel }): Promise<void> {
  const code = newCode(codeKind(a.channel));
  await changeHuman(es, { ...a, creator: a.userId }, "a one-time code", () => [
    events[a.channel].code.change({ code: box.seal(code), expiresAt: new Date(es.clock.now() + OTP_CODE_LIFETIME_MS).toISOString() }),
  ]);
}

/** Whether `code` is the sign-in's pending code; a right one is used up. */
export async function checkLoginCode(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; userId: string; channel: OtpChannel; code: string },
): Promise<boolean> {
  try {
    const c = { what: "a one-time code", kind: codeKind(a.channel), given: a.code, field: "code" };
    await changeWithCode(es, box, { ...a, creator: a.userId }, c, () => [events[a.channel].checked.change()]);
    return true;
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.InvalidArgument) return false;
    throw e;
  }
}
