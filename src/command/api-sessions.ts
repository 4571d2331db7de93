import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { User } from "../../gen/prisma/client.js";
import type { SecretBox } from "../crypto/secrets.js";
import { dateOf } from "../domain/clock.js";
import { inheritanceChain } from "../domain/contexts.js";
import { errors } from "../errors/errors.js";
import type { EventStore, StoredEvent } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { SettingsQueries } from "../query/settings.js";
import { usableUserOf } from "../query/tenancy.js";
import { userByLoginName } from "../query/users.js";
import type { Database } from "../storage/database.js";
import { apiSessionChecked, apiSessionCreated, sessionTerminated, type SessionFactors } from "../events/index.js";
import { isTooManyFailures, limitedSignIn, type SignInLimits, type TooManyFailures } from "./failure-limits.js";
import { IdpQueries } from "../query/idps.js";
import { intentResult } from "./idp-intents.js";
import { checkPassword, type Lockout, lockoutOf } from "./login.js";
import type { ReplayGuard } from "./replay.js";
import { checkLoginCode, loginCodeChannels, sendLoginCode } from "./otp-codes.js";
import { checkTotp } from "./totp.js";
import * as webauthn from "./webauthn.js";

/**
 * Sessions of the sessions API (custom login UIs). Each is a row of the login sessions, so tokens issued
 * through it carry its auth_time, amr and sid and end with it, like those of the built-in login UI. Its
 * token is 32 random bytes returned to the caller; only its SHA-256 is kept and compared in constant time.
 * A check that fails changes nothing: the session is not created, or stays as it was.
 */
export interface SessionChecks {
  user?: { userId: string } | { loginName: string };
  password?: string;
  totp?: string;
  otpEmail?: string;
  otpSms?: string;
  /** An assertion answering the session's WebAuthn challenge, from a page of `origin`. */
  webAuthN?: { credentialJson: string; origin: string };
  /** A succeeded intent of the intents API whose provider account is linked to the user (single use). */
  idpIntent?: { id: string; token: string };
}

/** Second factors whose code is sent on request (after the checks of the same call passed), and WebAuthn options. */
export interface SessionChallenges {
  otpEmail?: boolean;
  otpSms?: boolean;
  /** Options for the user's security keys, or with `userVerified` its passkeys, for the RP ID `rpId`. */
  webAuthN?: { userVerified: boolean; rpId: string };
}

/** How long a WebAuthn challenge of a session may be answered (the browser's own prompt gives up after 5 minutes). */
const WEBAUTHN_CHALLENGE_MS = 5 * 60_000;

export interface SessionDeps {
  es: EventStore;
  db: Database;
  box: SecretBox;
  settings: SettingsQueries;
  /** Uses up accepted TOTP codes. */
  replay: ReplayGuard;
  /** Failed checks per account (no address: the caller is a login UI serving everyone). */
  limits?: SignInLimits | undefined;
}

/** The longest lifetime a session may be given. */
export const MAX_SESSION_LIFETIME_S = 30 * 86_400;

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** Whether `token` is the session's: SHA-256 of both compared in constant time. */
export function tokenMatches(storedHash: string | null, token: string): boolean {
  const given = Buffer.from(hashOf(token), "hex");
  const stored = Buffer.from(storedHash ?? "", "hex");
  return stored.length === given.length && timingSafeEqual(stored, given);
}

async function findUser(deps: SessionDeps, instanceId: string, ref: NonNullable<SessionChecks["user"]>): Promise<User> {
  const user =
    "userId" in ref
      ? await deps.db.prisma.user.findFirst({ where: { id: ref.userId, instanceId } })
      : await userByLoginName(deps.db.primary, instanceId, ref.loginName, deps.settings);
  if (!user) throw errors.notFound("SESS-us3r", "checks.user: no such user");
  if (user.kind !== "human") throw errors.invalidArgument("SESS-hum4", "invalid checks.user: only human users sign in through sessions");
  // Active, in an active organisation: as every sign-in.
  if (!(await usableUserOf(deps.db.primary, user.id)))
    throw errors.failedPrecondition("SESS-st4t", "checks.user: the user cannot sign in (locked or inactive)");
  return user;
}

/** A check's outcome, or RESOURCE_EXHAUSTED when the account is over its failures. */
function notTooMany<T>(outcome: T | TooManyFailures): T {
  if (isTooManyFailures(outcome)) {
    throw errors.resourceExhausted("SESS-l1m1", `too many failed checks for this user: retry after ${outcome.retryAfterS} s`);
  }
  return outcome;
}

/** The factors after `checks` on `user` (the password and TOTP checked now), and the amr they make. */
async function applyChecks(deps: SessionDeps, instanceId: string, user: User, factors: SessionFactors, checks: SessionChecks) {
  const now = dateOf(deps.es.clock).toISOString();
  const next: SessionFactors = { ...factors };
  const lockout: Lockout = lockoutOf(deps.settings, instanceId, deps.box);
  if (checks.password !== undefined) {
    const passed = notTooMany(await checkPassword(deps.es, deps.db, { ...lockout, user: { userId: user.id }, password: checks.password, limits: deps.limits }));
    if (passed?.id !== user.id)
      throw errors.invalidArgument("SESS-pw0k", "invalid checks.password.password: the password is wrong, or the user cannot sign in");
    next.password = { checkedAt: now };
  }
  if (checks.totp !== undefined) {
    if (!notTooMany(await checkTotp(deps.es, deps.db, deps.box, deps.replay, { ...lockout, user, code: checks.totp, limits: deps.limits })))
      throw errors.invalidArgument("SESS-t0tp", "invalid checks.totp.code: the code is wrong or used, or the user has no authenticator app");
    next.totp = { checkedAt: now };
  }
  for (const [channel, field] of [
    ["email", "otpEmail"],
    ["sms", "otpSms"],
  ] as const) {
    const code = checks[field];
    if (code === undefined) continue;
    const checked = await limitedSignIn(
      deps.limits,
      user.id,
      async () => (await checkLoginCode(deps.es, deps.box, { instanceId, userId: user.id, channel, code })) || undefined,
    );
    if (!notTooMany(checked))
      throw errors.invalidArgument(
        "SESS-0tpc",
        `invalid checks.otp_${channel}.code: the code is wrong, used or expired (ask for a new one with challenges.otp_${channel})`,
      );
    next[field] = { checkedAt: now };
  }
  if (checks.webAuthN !== undefined) {
    next.webAuthN = await checkWebAuthN(deps, instanceId, user, next, checks.webAuthN);
    delete next.webAuthNChallenge;
  }
  if (checks.idpIntent !== undefined) next.idpIntent = { checkedAt: now, idpId: await checkIdpIntent(deps, instanceId, user, checks.idpIntent) };
  const otp = !!(next.totp || next.otpEmail || next.otpSms);
  const key = !!next.webAuthN;
  const userVerified = !!next.webAuthN?.userVerified;
  // As the built-in login UI: a security key after the password is pwd, hwk, mfa; a passkey is user, hwk, mfa; a
  // sign-in through a provider starts with fed.
  const amr = [
    ...(next.idpIntent ? ["fed"] : []),
    ...(next.password ? ["pwd"] : []),
    ...(userVerified ? ["user"] : []),
    ...(otp ? ["otp"] : []),
    ...(key ? ["hwk"] : []),
  ];
  if ((next.password || userVerified || next.idpIntent) && (otp || key)) amr.push("mfa");
  const authenticated = [checks.password, checks.totp, checks.otpEmail, checks.otpSms, checks.webAuthN, checks.idpIntent].some((c) => c !== undefined);
  return { factors: next, amr, authenticated };
}

/**
 * The intent checked: succeeded, its token right, unexpired, and its provider account linked to the user; then
 * used up. Its provider's ID; INVALID_ARGUMENT naming the field otherwise (whatever the reason: an intent token
 * is a credential).
 */
async function checkIdpIntent(deps: SessionDeps, instanceId: string, user: User, check: NonNullable<SessionChecks["idpIntent"]>): Promise<string> {
  const refused = () =>
    errors.invalidArgument(
      "SESS-1dp1",
      "invalid checks.idp_intent: the intent is unknown, not succeeded, used or expired, its token is wrong, its account is not linked to the user, or its provider is not active in the user's organisation",
    );
  const intent = { instanceId, id: check.id, token: check.token };
  const result = await intentResult(deps.es, deps.box, { ...intent, consume: false });
  if (!result) throw refused();
  const link = await deps.db.prisma.userIdpLink.findUnique({
    where: { idpId_externalUserId: { idpId: result.idpId, externalUserId: result.externalUserId } },
    select: { userId: true },
  });
  if (link?.userId !== user.id) throw refused();
  // As in the login UI: the provider must be usable in the user's own organisation now (its state policies, the
  // login settings' allow_external_idp), not only where the intent started.
  const login = await deps.settings.values("login", inheritanceChain({ type: "org", instanceId, orgId: user.orgId }));
  const active = await new IdpQueries(deps.db.primary).activeIn({ type: "org", id: user.orgId, instanceId });
  if (!login.allow_external_idp || !active.some((r) => r.id === result.idpId)) throw refused();
  if (!(await intentResult(deps.es, deps.box, { ...intent, consume: true }))) throw refused();
  return result.idpId;
}

/** The assertion checked against the session's pending challenge (which it uses up); INVALID_ARGUMENT naming the field. */
async function checkWebAuthN(deps: SessionDeps, instanceId: string, user: User, factors: SessionFactors, check: NonNullable<SessionChecks["webAuthN"]>) {
  const pending = factors.webAuthNChallenge;
  if (!pending || new Date(pending.expiresAt).getTime() <= deps.es.clock.now())
    throw errors.invalidArgument("SESS-wa01", "invalid checks.web_auth_n: the session has no open WebAuthn challenge (ask for one with challenges.web_auth_n)");
  const originProblem = webauthn.originProblem(check.origin, pending.rpId);
  if (originProblem) throw errors.invalidArgument("SESS-wa02", `invalid checks.web_auth_n.origin: ${originProblem}`);
  let response: AuthenticationResponseJSON;
  try {
    response = JSON.parse(check.credentialJson);
  } catch {
    throw errors.invalidArgument("SESS-wa03", "invalid checks.web_auth_n.credential_json: not JSON");
  }
  const passed = await webauthn.finishWebauthnLogin(deps.es, deps.db, {
    instanceId,
    userId: user.id,
    rp: { id: pending.rpId, origin: check.origin, name: pending.rpId },
    challenge: pending.challenge,
    purpose: pending.userVerified ? "passwordless" : "u2f",
    response,
  });
  if (passed?.userId !== user.id)
    throw errors.invalidArgument("SESS-wa04", "invalid checks.web_auth_n.credential_json: the credential is not the user's, or does not answer the challenge");
  return { checkedAt: dateOf(deps.es.clock).toISOString(), userVerified: pending.userVerified };
}

/**
 * WebAuthn options for the user (FAILED_PRECONDITION where the login settings allow neither security keys nor, for
 * user verification, passkeys); the challenge goes into the session's factors, to be answered once.
 */
async function webAuthNChallenge(deps: SessionDeps, instanceId: string, user: User, asked: NonNullable<SessionChallenges["webAuthN"]>) {
  const login = await deps.settings.values("login", inheritanceChain({ type: "org", instanceId, orgId: user.orgId }));
  if (asked.userVerified ? !login.passwordless_allowed : !login.second_factors.includes("u2f")) {
    const what = asked.userVerified ? "passkeys (login settings passwordless_allowed)" : 'security keys (login settings second_factors "u2f")';
    throw errors.failedPrecondition("SESS-wa05", `challenges.web_auth_n: ${what} are not allowed for this user`);
  }
  const rp = { id: asked.rpId, origin: "", name: asked.rpId };
  const options = await webauthn.startWebauthnLogin(deps.db, { instanceId, userId: user.id, rp, purpose: asked.userVerified ? "passwordless" : "u2f" });
  const pending = {
    challenge: options.challenge,
    rpId: asked.rpId,
    userVerified: asked.userVerified,
    expiresAt: new Date(deps.es.clock.now() + WEBAUTHN_CHALLENGE_MS).toISOString(),
  };
  return { options, pending };
}

/**
 * Sends the codes asked for: each channel must be one the user turned on, with its address verified, and that
 * the login settings of the user's organisation allow (FAILED_PRECONDITION naming the challenge otherwise).
 */
async function sendChallenges(deps: SessionDeps, instanceId: string, user: User, challenges: SessionChallenges | undefined) {
  const asked = (["email", "sms"] as const).filter((c) => challenges?.[c === "email" ? "otpEmail" : "otpSms"]);
  if (!asked.length) return;
  const login = await deps.settings.values("login", inheritanceChain({ type: "org", instanceId, orgId: user.orgId }));
  for (const channel of asked) {
    if ((await loginCodeChannels(deps.db, login.second_factors, instanceId, user.id)).includes(channel)) {
      await sendLoginCode(deps.es, deps.box, { instanceId, userId: user.id, channel });
    } else {
      throw errors.failedPrecondition("SESS-ch4l", `challenges.otp_${channel}: the user has no one-time codes by ${channel} (turned on, verified and allowed)`);
    }
  }
}

const expiryOf = (lifetimeS: number | undefined, now: number) => (lifetimeS === undefined ? null : new Date(now + lifetimeS * 1000).toISOString());

/** A new session for the user of `checks.user`, with the other checks passed; its ID and token. */
export async function createSession(
  deps: SessionDeps,
  a: { instanceId: string; creator: string; checks: SessionChecks; lifetimeS?: number; challenges?: SessionChallenges },
) {
  if (!a.checks.user) throw errors.invalidArgument("SESS-n0us", "invalid checks.user: is required to create a session");
  const user = await findUser(deps, a.instanceId, a.checks.user);
  const { factors, amr } = await applyChecks(deps, a.instanceId, user, { user: { id: user.id, checkedAt: dateOf(deps.es.clock).toISOString() } }, a.checks);
  await sendChallenges(deps, a.instanceId, user, a.challenges);
  const webAuthN = a.challenges?.webAuthN ? await webAuthNChallenge(deps, a.instanceId, user, a.challenges.webAuthN) : undefined;
  if (webAuthN) factors.webAuthNChallenge = webAuthN.pending;
  const id = newId();
  const token = randomBytes(32).toString("base64url");
  const { events } = await deps.es.execute((w) =>
    w.push(a.instanceId, a.creator, [
      apiSessionCreated.event(
        { aggregateId: id, resourceOwner: user.orgId },
        { userId: user.id, tokenHash: hashOf(token), factors, amr, expiresAt: expiryOf(a.lifetimeS, deps.es.clock.now()) },
      ),
    ]),
  );
  return { id, token, event: events[0]!, webAuthNOptions: webAuthN?.options };
}

/** Adds checks to a session whose token is `token`; NOT_FOUND for a wrong token, an ended or another instance's session. */
export async function checkSession(
  deps: SessionDeps,
  a: { instanceId: string; creator: string; id: string; token: string; checks: SessionChecks; lifetimeS?: number; challenges?: SessionChallenges },
) {
  const row = await usableSession(deps.db, a.instanceId, a.id, a.token, deps.es.clock.now());
  const user = await findUser(deps, a.instanceId, { userId: row.userId });
  if (a.checks.user) {
    const named = await findUser(deps, a.instanceId, a.checks.user);
    if (named.id !== user.id) throw errors.invalidArgument("SESS-us3c", "invalid checks.user: a session's user cannot change");
  }
  const { factors, amr, authenticated } = await applyChecks(deps, a.instanceId, user, row.factors as SessionFactors, a.checks);
  await sendChallenges(deps, a.instanceId, user, a.challenges);
  const webAuthN = a.challenges?.webAuthN ? await webAuthNChallenge(deps, a.instanceId, user, a.challenges.webAuthN) : undefined;
  if (webAuthN) factors.webAuthNChallenge = webAuthN.pending;
  const expiresAt = a.lifetimeS === undefined ? (row.expiresAt?.toISOString() ?? null) : expiryOf(a.lifetimeS, deps.es.clock.now());
  // The WebAuthn challenge the assertion answered, as read before the lock.
  const answered = a.checks.webAuthN ? (row.factors as SessionFactors).webAuthNChallenge?.challenge : undefined;
  const { events } = await deps.es.execute(async (w) => {
    await w.lock(a.instanceId, "session", a.id);
    const current = await w.tx.loginSession.findUnique({ where: { id: a.id }, select: { factors: true } });
    // Deleted meanwhile: nothing to add the checks to.
    if (!current) throw errors.notFound("SESS-g0ne", `session "${a.id}" not found`);
    // Under the lock, the challenge is still open or a concurrent call used it up: one assertion, one success. This
    // call's event then uses it up (the factors it writes have none).
    if (answered !== undefined && (current.factors as SessionFactors).webAuthNChallenge?.challenge !== answered) {
      throw errors.invalidArgument(
        "SESS-wa06",
        "invalid checks.web_auth_n: the challenge was answered meanwhile (ask for a new one with challenges.web_auth_n)",
      );
    }
    await w.push(a.instanceId, a.creator, [
      apiSessionChecked.event({ aggregateId: a.id, resourceOwner: user.orgId }, { factors, amr, expiresAt, authenticated }),
    ]);
  });
  return { token: a.token, event: events[0]!, webAuthNOptions: webAuthN?.options };
}

/**
 * A session of this instance that has not ended at `now` (ms; the server's clock, the system's by default) and
 * whose token is `token`; else NOT_FOUND (one answer for all three).
 */
export async function usableSession(db: Database, instanceId: string, id: string, token: string, now = Date.now()) {
  const row = await db.prisma.loginSession.findUnique({ where: { id } });
  const usable =
    row && row.instanceId === instanceId && row.tokenHash && (!row.expiresAt || row.expiresAt.getTime() > now) && tokenMatches(row.tokenHash, token);
  if (!usable) throw errors.notFound("SESS-n0tf", `session "${id.slice(0, 200)}" not found, ended, or the session token is wrong`);
  return row;
}

/** Ends a session of the instance (of the sessions API or of a browser): tokens issued through it stop working. */
export async function deleteSession(es: EventStore, a: { instanceId: string; creator: string; id: string }): Promise<StoredEvent> {
  const { events } = await es.execute(async (w) => {
    await w.lock(a.instanceId, "session", a.id);
    const row = await w.tx.loginSession.findUnique({ where: { id: a.id }, select: { instanceId: true, userId: true } });
    if (row?.instanceId !== a.instanceId) throw errors.notFound("SESS-d3l0", `session "${a.id}" not found`);
    const user = await w.tx.user.findUnique({ where: { id: row.userId }, select: { orgId: true } });
    await w.push(a.instanceId, a.creator, [sessionTerminated.event({ aggregateId: a.id, resourceOwner: user?.orgId ?? "" })]);
  });
  return events[0]!;
}
