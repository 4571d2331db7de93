import { Code, ConnectError } from "@connectrpc/connect";
import { hashParameterProblem, hashPassword, isSupportedHash } from "../../crypto/password.js";
import type { SecretBox } from "../../crypto/secrets.js";
import type { HumanUserShape } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import type { EventStore, NewEvent } from "../../eventstore/eventstore.js";
import { newId } from "../../ids.js";
import { withUniqueConflict, type ChangeDetails } from "../aggregate.js";
import { humanAdded, totpAdded, totpVerified, userDeactivated, userLocked } from "../../events/index.js";
import { idpLinkEvents, type IdpLink } from "../idp-links.js";
import { checkUsernameFree, type NewHuman } from "../users.js";

/**
 * Imported humans (single-user import, data import, the migration tool's output): ZITADEL's
 * ImportHumanUserRequest checked field by field, then one transaction of ordinary events under the given ID.
 * Imported objects are marked by their events' creator, `import:<caller's user ID>` (docs/decisions.md).
 */
export const importCreator = (callerId: string) => `import:${callerId}`;

export interface ImportableHuman {
  human: NewHuman;
  /** A hash in a form the server verifies, or a plain password (checked against the complexity rules, then hashed). */
  password?: { hash: string } | { plain: string };
  passwordChangeRequired: boolean;
  /** The TOTP secret, base32; verified at once (it was in use before). */
  otpSecret?: string;
  state: "active" | "inactive" | "locked";
  /** Accounts at identity providers of the instance (or the system). */
  idpLinks: IdpLink[];
}

const invalid = (field: string, why: string) => errors.invalidArgument("IMPORT-h0mn", `invalid ${field}: ${why}`);
const text = (v: unknown, field: string, max: number, required = false): string | undefined => {
  if (v === undefined || v === null || v === "") {
    if (required) throw invalid(field, "is required");
    return undefined;
  }
  if (typeof v !== "string") throw invalid(field, "must be a string");
  if ([...v].length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
};
const STATES: Record<string, ImportableHuman["state"]> = { USER_STATE_ACTIVE: "active", USER_STATE_INACTIVE: "inactive", USER_STATE_LOCKED: "locked" };

/** The human an import body describes, or INVALID_ARGUMENT naming the field (`prefix` places it in a larger body). */
/**
 * An import entry checked and shaped as a new human. `emailRequired` false (the data import): a user without an
 * address (the export writes "" for one, such as the first instance's admin) comes back without one.
 */
export function importableHuman(u: HumanUserShape, prefix = "", { emailRequired = true } = {}): ImportableHuman {
  const f = (name: string) => `${prefix}${name}`;
  const username = text(u.userName, f("user_name"), 200, true)!;
  const email = text(u.email?.email, f("email.email"), 200, emailRequired) ?? "";
  if ((email || emailRequired) && !/^[^\s@]+@[^\s@]+$/.test(email)) throw invalid(f("email.email"), "is not an e-mail address");
  const phone = text(u.phone?.phone, f("phone.phone"), 50);
  if (phone && !/^\+\d[\d ]{3,}$/.test(phone)) throw invalid(f("phone.phone"), 'must be a number in international form ("+41 79 ...")');
  const p = u.profile ?? {};
  const human: NewHuman = {
    username,
    givenName: text(p.firstName, f("profile.first_name"), 200) ?? "",
    familyName: text(p.lastName, f("profile.last_name"), 200) ?? "",
    nickName: text(p.nickName, f("profile.nick_name"), 200),
    displayName: text(p.displayName, f("profile.display_name"), 200) || [p.firstName, p.lastName].filter(Boolean).join(" ") || username,
    preferredLanguage: text(p.preferredLanguage, f("profile.preferred_language"), 10),
    email,
    emailVerified: u.email?.isEmailVerified === true,
    ...(phone ? { phone, phoneVerified: u.phone?.isPhoneVerified === true } : {}),
  };
  const hash = text(u.hashedPassword?.value, f("hashed_password.value"), 1000);
  const plain = text(u.password, f("password"), 200);
  if (hash && plain) throw invalid(f("password"), "give either password or hashed_password, not both");
  // A hash the login cannot verify would make a user who can never sign in: refused here instead.
  if (hash && !isSupportedHash(hash)) {
    throw invalid(
      f("hashed_password.value"),
      "not a supported hash ($pbkdf2[-sha1|-sha224|-sha256|-sha384|-sha512]$, $2a$/$2b$/$2y$, $argon2id$, $argon2i$, $scrypt$)",
    );
  }
  // Every login attempt for the user, anonymous ones too, pays the hash's cost: it must stay bounded.
  const costly = hash ? hashParameterProblem(hash) : undefined;
  if (costly) throw invalid(f("hashed_password.value"), costly);
  const otp = text(u.otpCode, f("otp_code"), 200)?.replace(/\s/g, "").toUpperCase();
  // RFC 4648 base32 of at least 80 bits (RFC 4226 §4 asks for 128, authenticator apps accept 80).
  if (otp && !/^[A-Z2-7]{16,}=*$/.test(otp)) throw invalid(f("otp_code"), "must be a base32 TOTP secret of at least 16 characters");
  if (u.idps !== undefined && !Array.isArray(u.idps)) throw invalid(f("idps"), "must be a list");
  const idpLinks = (u.idps ?? []).map((l, i) => ({
    idpId: text(l?.configId, f(`idps[${i}].config_id`), 200, true)!,
    externalUserId: text(l?.externalUserId, f(`idps[${i}].external_user_id`), 200, true)!,
    displayName: text(l?.displayName, f(`idps[${i}].display_name`), 200) ?? "",
  }));
  const state = u.state ? STATES[u.state] : "active";
  if (!state) throw invalid(f("state"), `must be one of ${Object.keys(STATES).join(", ")}`);
  return {
    human,
    ...(hash ? { password: { hash } } : plain ? { password: { plain } } : {}),
    passwordChangeRequired: u.passwordChangeRequired === true,
    ...(otp ? { otpSecret: otp } : {}),
    state,
    idpLinks,
  };
}

/** The stored hash of an importable human's password; a plain one must pass `complexity` (INVALID_ARGUMENT naming `field`). */
export async function importedPasswordHash(h: ImportableHuman, complexity: (plain: string) => string | undefined, field = "password") {
  if (!h.password) return undefined;
  if ("hash" in h.password) return h.password.hash;
  const problem = complexity(h.password.plain);
  if (problem) throw invalid(field, problem);
  return hashPassword(h.password.plain);
}

/** The events that add an imported human: the user, its verified authenticator, its state. */
export function importedHumanEvents(box: SecretBox, userId: string, orgId: string, h: ImportableHuman, passwordHash: string | undefined): NewEvent[] {
  const ref = { aggregateId: userId, resourceOwner: orgId };
  return [
    humanAdded.event(ref, {
      ...h.human,
      // no address: none stored (an empty one would be an address)
      ...(h.human.email ? {} : { email: undefined, emailVerified: false }),
      displayName: h.human.displayName || h.human.username,
      passwordHash: passwordHash ?? null,
      passwordChangeRequired: h.passwordChangeRequired,
    }),
    ...(h.otpSecret ? [totpAdded.event(ref, { secret: box.seal(h.otpSecret) }), totpVerified.event(ref)] : []),
    ...(h.state === "inactive" ? [userDeactivated.event(ref)] : h.state === "locked" ? [userLocked.event(ref)] : []),
  ];
}

/**
 * Adds an imported human under `userId` (a new ID when absent). A user of that ID already in the instance
 * is left as it is (`created` false): running an import again creates nothing twice. A taken username is
 * ALREADY_EXISTS, an unknown organisation NOT_FOUND.
 */
export async function importHuman(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; orgId: string; creator: string; userId?: string; human: ImportableHuman; passwordHash: string | undefined },
): Promise<{ details: ChangeDetails; created: boolean }> {
  const id = a.userId || newId();
  const taken = () => errors.alreadyExists("IMPORT-n4me", `the username "${a.human.human.username}" is taken in this instance`);
  const { result } = await withUniqueConflict("User", taken, () =>
    es.execute(async (w) => {
      await w.lock(a.instanceId, "user", id);
      const existing = await w.tx.user.findUnique({ where: { id } });
      if (existing) {
        if (existing.instanceId !== a.instanceId) throw errors.alreadyExists("IMPORT-1d00", `the user ID "${id}" is used in another instance`);
        const details: ChangeDetails = {
          id,
          sequence: existing.sequence,
          changeDate: existing.changeDate,
          instanceId: a.instanceId,
          resourceOwner: existing.orgId,
        };
        return { details, created: false };
      }
      const org = await w.tx.org.findFirst({ where: { id: a.orgId, instanceId: a.instanceId } });
      if (!org) throw errors.notFound("IMPORT-0rg1", `organization "${a.orgId}" not found`);
      await checkUsernameFree(w, a.instanceId, a.orgId, a.human.human.username);
      const links = await idpLinkEvents(w.tx, { instanceId: a.instanceId, userId: id, orgId: a.orgId, links: a.human.idpLinks, fieldOf: (i) => `idps[${i}]` });
      const stored = await w.push(a.instanceId, a.creator, [...importedHumanEvents(box, id, a.orgId, a.human, a.passwordHash), ...links]);
      const last = stored[stored.length - 1]!;
      const details: ChangeDetails = { id, sequence: last.sequence, changeDate: last.createdAt, instanceId: a.instanceId, resourceOwner: a.orgId };
      return { details, created: true };
    }),
  );
  return result;
}

/**
 * Whether an imported human is sent the initialisation mail: its e-mail is not verified, or it has no password
 * (one without an address has nowhere to get it).
 */
export const needsInitialisation = (h: ImportableHuman, passwordHash: string | undefined) => h.human.email !== "" && (!h.human.emailVerified || !passwordHash);

export interface HumanToImport {
  userId: string;
  human: ImportableHuman;
  passwordHash: string | undefined;
}

/** What became of one human of a batch: created, already there, or the error to report for it. */
export type BatchOutcome = { created: boolean; error?: undefined } | { error: unknown; created?: undefined };

const entryError = (err: unknown) => err instanceof ConnectError && err.code !== Code.Internal;

/**
 * Imports many humans of one organisation in one transaction (an import of thousands of users would otherwise
 * spend its time committing). An entry's own problem (a taken username, an ID of another instance) is found by
 * reads before anything is written and reported for that entry alone; should the transaction still fail (a
 * concurrent writer), each entry is imported on its own instead. Every user is whole or absent either way.
 */
export async function importHumans(
  es: EventStore,
  box: SecretBox,
  a: { instanceId: string; orgId: string; creator: string },
  items: HumanToImport[],
): Promise<BatchOutcome[]> {
  try {
    const { result } = await es.execute(async (w) => {
      const org = await w.tx.org.findFirst({ where: { id: a.orgId, instanceId: a.instanceId } });
      if (!org) throw errors.notFound("IMPORT-0rg2", `organization "${a.orgId}" not found`);
      const existing = new Map(
        (await w.tx.user.findMany({ where: { id: { in: items.map((i) => i.userId) } }, select: { id: true, instanceId: true } })).map((u) => [u.id, u]),
      );
      const logins = items.map((i) => i.human.human.username.toLowerCase());
      const taken = new Set(
        (await w.tx.user.findMany({ where: { instanceId: a.instanceId, loginName: { in: logins } }, select: { loginName: true } })).map((u) => u.loginName),
      );
      const outcomes: BatchOutcome[] = [];
      const events: NewEvent[] = [];
      for (const [n, item] of items.entries()) {
        const there = existing.get(item.userId);
        if (there) {
          outcomes.push(
            there.instanceId === a.instanceId
              ? { created: false }
              : { error: errors.alreadyExists("IMPORT-1d01", `the user ID "${item.userId}" is used in another instance`) },
          );
          continue;
        }
        if (taken.has(logins[n]!)) {
          outcomes.push({ error: errors.alreadyExists("IMPORT-n4m2", `the username "${item.human.human.username}" is taken in this instance`) });
          continue;
        }
        let links: NewEvent[];
        try {
          links = await idpLinkEvents(w.tx, {
            instanceId: a.instanceId,
            userId: item.userId,
            orgId: a.orgId,
            links: item.human.idpLinks,
            fieldOf: (i) => `idps[${i}]`,
          });
        } catch (err) {
          if (!entryError(err)) throw err;
          outcomes.push({ error: err });
          continue;
        }
        taken.add(logins[n]!);
        existing.set(item.userId, { id: item.userId, instanceId: a.instanceId });
        events.push(...importedHumanEvents(box, item.userId, a.orgId, item.human, item.passwordHash), ...links);
        outcomes.push({ created: true });
      }
      await w.push(a.instanceId, a.creator, events);
      return outcomes;
    });
    return result;
  } catch (err) {
    if (entryError(err) && (err as ConnectError).code === Code.NotFound) return items.map(() => ({ error: err }));
    const out: BatchOutcome[] = [];
    for (const item of items) {
      try {
        out.push({ created: (await importHuman(es, box, { ...a, ...item })).created });
      } catch (e) {
        if (!entryError(e)) throw e;
        out.push({ error: e });
      }
    }
    return out;
  }
}
