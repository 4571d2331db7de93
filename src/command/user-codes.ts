import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { User } from "../../gen/prisma/client.js";
import type { SecretBox } from "../crypto/secrets.js";
import { errors } from "../errors/errors.js";
import type { EventChange } from "../eventstore/definition.js";
import type { EventStore, EventWriter } from "../eventstore/eventstore.js";
import type { CodeKind } from "../domain/user-codes.js";
import type { ChangeDetails } from "./aggregate.js";
import { changeHuman } from "./humans.js";
import {
  emailCodeAdded,
  emailVerified,
  passwordChanged,
  passwordCodeAdded,
  phoneCodeAdded,
  phoneVerified,
  unlockCodeAdded,
  userCodeFailed,
  userUnlocked,
} from "../events/index.js";

/**
 * Codes sent to a user to prove an address or to set a password (issue 14): e-mail verification, phone
 * verification by SMS, the initial password of a user created without one, a forgotten password. Each event
 * carries its code sealed with the master key (the notification worker opens it to send it); the projection
 * `user_codes` keeps the latest per kind. A code is checked under the user's lock and consumed by the event it
 * allows, so it works once; a newer code replaces it; it expires.
 */
export { type CodeKind, MAX_CODE_FAILURES } from "../domain/user-codes.js";

/**
 * How long a code works: three days for the initial password and a day for an unlock (the mail may be read
 * later), an hour for the others.
 */
export const codeLifetimeMs = { email: 60 * 60_000, phone: 60 * 60_000, init: 72 * 60 * 60_000, reset: 60 * 60_000, unlock: 24 * 60 * 60_000 };

// No 0/O or 1/I: codes are read from a mail and may be typed.
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A fresh code: 6 digits for an SMS and a sign-in's one-time code (typed at once), else 8 characters (40 bits). */
export function newCode(kind: CodeKind): string {
  if (kind === "phone" || kind === "otp_email" || kind === "otp_sms") return String(randomInt(0, 1_000_000)).padStart(6, "0");
  return Array.from({ length: 8 }, () => ALPHABET[randomInt(0, ALPHABET.length)]).join("");
}

const normalized = (code: string) => code.replace(/[\s-]/g, "").toUpperCase();
const digest = (s: string) => createHash("sha256").update(s).digest();

/** Constant time whatever the input: both sides are hashed first, so the length does not show either. */
export function sameCode(expected: string, given: string): boolean {
  return timingSafeEqual(digest(normalized(expected)), digest(normalized(given)));
}

type HumanRow = User;

/** The events that send new codes, sealed; `returned`: the caller gets the code and nothing is sent. */
export const codeEvents = {
  email: (box: SecretBox, now: number, code: string, returned = false) =>
    emailCodeAdded.change({ code: box.seal(code), expiresAt: expiry(now, codeLifetimeMs.email), ...(returned ? { returned } : {}) }),
  phone: (box: SecretBox, now: number, code: string, returned = false) =>
    phoneCodeAdded.change({ code: box.seal(code), expiresAt: expiry(now, codeLifetimeMs.phone), ...(returned ? { returned } : {}) }),
  password: (box: SecretBox, now: number, code: string, reason: "init" | "reset", returned = false) =>
    passwordCodeAdded.change({ code: box.seal(code), expiresAt: expiry(now, codeLifetimeMs[reason]), reason, ...(returned ? { returned } : {}) }),
  unlock: (box: SecretBox, now: number) => unlockCodeAdded.change({ code: box.seal(newCode("unlock")), expiresAt: expiry(now, codeLifetimeMs.unlock) }),
};
/** `now`: the command's clock (EventWriter.clock), which tests move past a code's lifetime. */
const expiry = (now: number, ms: number) => new Date(now + ms).toISOString();

/**
 * What a new or changed human is sent (users.ts calls it for creations and patches): without a password the
 * initial-password mail (its link verifies the address too), else a code for an unverified e-mail address;
 * a code for an unverified phone number.
 */
export function codesForHuman(
  box: SecretBox,
  now: number,
  h: { email?: string | null; emailVerified?: boolean; phone?: string | null; phoneVerified?: boolean; needsPassword?: boolean },
): EventChange<object, "user">[] {
  const out: EventChange<object, "user">[] = [];
  if (h.email && h.needsPassword) out.push(codeEvents.password(box, now, newCode("password"), "init"));
  else if (h.email && h.emailVerified === false) out.push(codeEvents.email(box, now, newCode("email")));
  if (h.phone && h.phoneVerified === false) out.push(codeEvents.phone(box, now, newCode("phone")));
  return out;
}

type Who = { instanceId: string; userId: string; creator: string };

/** A new code for the user's e-mail address or phone number, sent, or returned with `returnCode` (custom UIs). */
export async function resendCode(es: EventStore, box: SecretBox, a: Who & { kind: "email" | "phone"; returnCode?: boolean }) {
  const code = newCode(a.kind);
  const details = await changeHuman(es, a, `a ${a.kind} code`, (u, w) => {
    const address = a.kind === "email" ? u.email : u.phone;
    if (!address) throw errors.failedPrecondition("UCODE-n0ad", `user "${u.id}" has no ${a.kind === "email" ? "e-mail address" : "phone number"}`);
    if (a.kind === "email" ? u.emailVerified : u.phoneVerified)
      throw errors.failedPrecondition("UCODE-v3rd", `the ${a.kind} of user "${u.id}" is already verified`);
    return [codeEvents[a.kind](box, w.clock.now(), code, !!a.returnCode)];
  });
  return { details, code: a.returnCode ? code : undefined };
}

const wrongCode = (field: string) => errors.invalidArgument("UCODE-c0de", `invalid ${field}: the code is wrong, used or expired`);

/** The user's pending code of `kind`, and whether `given` is it (compared even without one: the same time either way). */
async function pendingCode(w: Pick<EventWriter, "tx" | "clock">, box: SecretBox, u: HumanRow, kind: CodeKind, given: string) {
  const found = await w.tx.userCode.findUnique({ where: { userId_kind: { userId: u.id, kind } } });
  const matches = sameCode(found ? box.open(found.code) : "-", given);
  const row = found && found.expiresAt.getTime() > w.clock.now() ? found : null;
  return { row, matches };
}

/** The user's pending code of `kind` if `given` is it and it has not expired; else INVALID_ARGUMENT naming `field`. Counts nothing. */
export async function checkCode(w: Pick<EventWriter, "tx" | "clock">, box: SecretBox, u: HumanRow, kind: CodeKind, given: string, field: string) {
  const { row, matches } = await pendingCode(w, box, u, kind, given);
  if (!row || !matches) throw wrongCode(field);
  return row;
}

/**
 * A change of the user proven by its pending code of `kind`: `use` chooses the events once `given` is the code.
 * A wrong code is INVALID_ARGUMENT naming `field` and is counted (`user.code.failed`, committed although the
 * change is refused); the MAX_CODE_FAILURES-th spends the code.
 */
export async function changeWithCode(
  es: EventStore,
  box: SecretBox,
  a: Who,
  c: { what: string; kind: CodeKind; given: string; field: string },
  use: (
    u: HumanRow,
    w: EventWriter,
    row: NonNullable<Awaited<ReturnType<typeof pendingCode>>["row"]>,
  ) => EventChange<object, "user">[] | Promise<EventChange<object, "user">[]>,
): Promise<ChangeDetails> {
  let wrong = false;
  const details = await changeHuman(es, a, c.what, async (u, w) => {
    const { row, matches } = await pendingCode(w, box, u, c.kind, c.given);
    if (!row) throw wrongCode(c.field);
    if (!matches) {
      wrong = true;
      return [userCodeFailed.change({ kind: c.kind })];
    }
    return use(u, w, row);
  });
  if (wrong) throw wrongCode(c.field);
  return details;
}

/** Verifies the e-mail address or phone number with the code sent to it; the code is used up. */
export function verifyCode(es: EventStore, box: SecretBox, a: Who & { kind: "email" | "phone"; code: string; field?: string }): Promise<ChangeDetails> {
  const c = { what: `a ${a.kind} code`, kind: a.kind, given: a.code, field: a.field ?? "verification_code" };
  return changeWithCode(es, box, a, c, () => [a.kind === "email" ? emailVerified.change() : phoneVerified.change()]);
}

/**
 * Mails the user a single-use link to set a password (`reason` "init": the account's first password, which
 * also verifies the e-mail address; "reset": a forgotten one). With `returnCode` the code is returned and
 * nothing is mailed. FAILED_PRECONDITION when the user has no e-mail address to mail it to.
 */
export async function requestPasswordCode(es: EventStore, box: SecretBox, a: Who & { reason: "init" | "reset"; returnCode?: boolean }) {
  const code = newCode("password");
  const details = await changeHuman(es, a, "a password code", (u, w) => {
    if (!u.email && !a.returnCode) throw errors.failedPrecondition("UCODE-n0ml", `user "${u.id}" has no e-mail address`);
    return [codeEvents.password(box, w.clock.now(), code, a.reason, !!a.returnCode)];
  });
  return { details, code: a.returnCode ? code : undefined };
}

/**
 * Sends the initial-password mail to a human (created or imported without a password, or with an unverified
 * e-mail address): the link sets a password and verifies the address. For other code, e.g. the data import.
 */
export async function requestInitialPassword(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; userId: string; creator: string },
): Promise<ChangeDetails> {
  return (await requestPasswordCode(es, box, { ...a, reason: "init" })).details;
}

/**
 * Sets a new password (hashed by the caller after the complexity check) proven by the password code; an
 * initial-password code also verifies the e-mail address, since the mail reached its owner.
 */
export function setPasswordWithCode(es: EventStore, box: SecretBox, a: Who & { code: string; passwordHash: string; field?: string }): Promise<ChangeDetails> {
  const c = { what: "a password", kind: "password" as const, given: a.code, field: a.field ?? "verification_code" };
  return changeWithCode(es, box, a, c, (u, _w, row) => {
    return [
      passwordChanged.change({ passwordHash: a.passwordHash, changeRequired: false }),
      ...(row.reason === "init" && u.email && !u.emailVerified ? [emailVerified.change()] : []),
    ];
  });
}

/**
 * Whether `code` is the user's pending, unexpired password code (the set-password page checks it before its
 * form). A wrong code counts against the code as at the form (security review, finding 21): the link's GET is
 * no free oracle.
 */
export function passwordCodeValid(es: EventStore, box: SecretBox, a: Who & { code: string }): Promise<boolean> {
  return codeWorked(changeWithCode(es, box, a, { what: "a password code", kind: "password", given: a.code, field: "code" }, () => []));
}

/**
 * Whether a change proven by a code went through: false when the code or user does not work here
 * (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION); anything else is a server fault and goes up.
 */
export function codeWorked(change: Promise<unknown>): Promise<boolean> {
  return change.then(
    () => true,
    (e: unknown) => {
      if (e instanceof ConnectError && [Code.InvalidArgument, Code.NotFound, Code.FailedPrecondition].includes(e.code)) return false;
      throw e;
    },
  );
}

/** Unlocks a locked user with the code of the unlock mail (INVALID_ARGUMENT naming `field` when it does not work). */
export function unlockWithCode(es: EventStore, box: SecretBox, a: Who & { code: string; field?: string }): Promise<ChangeDetails> {
  return changeWithCode(es, box, a, { what: "an unlock", kind: "unlock", given: a.code, field: a.field ?? "code" }, (u) => {
    if (u.state !== "locked") throw errors.invalidArgument("UCODE-n0lk", `invalid ${a.field ?? "code"}: the user is not locked`);
    return [userUnlocked.change()];
  });
}
