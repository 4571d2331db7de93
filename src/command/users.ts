import { generateKeyPairSync, randomBytes } from "node:crypto";
import { hashParameterProblem, hashPassword, isSupportedHash } from "../crypto/password.js";
import { newPersonalAccessToken } from "../crypto/tokens.js";
import { errors } from "../errors/errors.js";
import type { EventChange } from "../eventstore/definition.js";
import type { EventStore, EventWriter, NewEvent } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { SecretBox } from "../crypto/secrets.js";
import { revokeRefreshToken } from "./tokens.js";
import { codesForHuman } from "./user-codes.js";
import { changeUser } from "./user-aggregate.js";
import { schemaDataChange } from "./user-schemas.js";
import { changedFields, withUniqueConflict, type ChangeDetails } from "./aggregate.js";
import type { IdpLink } from "./idp-links.js";
import {
  idpLinkAdded,
  humanAdded,
  humanChanged,
  instanceMemberAdded,
  keyAdded,
  keyRemoved,
  machineAdded,
  machineChanged,
  orgMemberAdded,
  passwordChanged,
  patAdded,
  patRemoved,
  secretRemoved,
  secretSet,
  systemMemberAdded,
  userDeactivated,
  userLocked,
  userReactivated,
  userRemoved,
  userUnlocked,
  type ContextType,
  type UserChanges,
} from "../events/index.js";

export interface HumanProfile {
  givenName: string;
  familyName: string;
  nickName?: string;
  displayName?: string;
  preferredLanguage?: string;
}

export interface NewHuman extends HumanProfile {
  username: string;
  email: string;
  emailVerified: boolean;
  phone?: string;
  phoneVerified?: boolean;
}

/** A password as an API gives it: plain (checked, then hashed) or an imported hash. */
export type PasswordInput = { plain: string; changeRequired: boolean } | { hash: string; changeRequired: boolean };

export interface NewMachine {
  username: string;
  name: string;
  description?: string;
  accessTokenType: "opaque" | "jwt";
}

type UserRow = NonNullable<Awaited<ReturnType<EventWriter["tx"]["user"]["findUnique"]>>>;

/** Turns a password input into the stored hash; plain passwords must pass `complexity` first. */
export async function passwordHashOf(input: PasswordInput, complexity: (plain: string) => string | undefined, field: string): Promise<string> {
  if ("hash" in input) {
    if (!isSupportedHash(input.hash)) {
      throw errors.invalidArgument(
        "USER-h4sh",
        `invalid ${field}.hashed_password: not a supported hash ($pbkdf2..., $2a$/$2b$/$2y$, $argon2id$, $argon2i$, $scrypt$)`,
      );
    }
    // Every login attempt for the user, anonymous ones too, pays the hash's cost: it must stay bounded.
    const costly = hashParameterProblem(input.hash);
    if (costly) throw errors.invalidArgument("USER-h4sc", `invalid ${field}.hashed_password: ${costly}`);
    return input.hash;
  }
  const problem = complexity(input.plain);
  if (problem) throw errors.invalidArgument("USER-c0mp", `invalid ${field}.password: ${problem}`);
  return hashPassword(input.plain);
}

const usernameTaken = (username: string) => errors.alreadyExists("USER-n4me", `the username "${username}" is taken in this instance`);

/**
 * A username a user of `orgId` may take: free in the instance, and not `…@<domain>` for a domain another
 * organisation verified (security review, finding 12): that login name is the other organisation's user's, and
 * the name lookup must not find an impostor for it. Verifying a domain later renames such users (the claim).
 */
export async function checkUsernameFree(w: EventWriter, instanceId: string, orgId: string, username: string, except?: string) {
  const name = username.toLowerCase();
  const other = await w.tx.user.findFirst({ where: { instanceId, loginName: name, ...(except ? { NOT: { id: except } } : {}) }, select: { id: true } });
  if (other) throw usernameTaken(username);
  await checkUsernameDomain(w, instanceId, orgId, name);
}

/** Not `…@<domain>` for a domain another organisation verified (see checkUsernameFree). */
async function checkUsernameDomain(w: EventWriter, instanceId: string, orgId: string, name: string) {
  const at = name.lastIndexOf("@");
  if (at <= 0) return;
  const domain = name.slice(at + 1);
  const owner = await w.tx.orgDomain.findFirst({ where: { instanceId, domain, verified: true, NOT: { orgId } }, select: { orgId: true } });
  if (owner) throw errors.invalidArgument("USER-d0mn", `invalid username: ${domain} is a verified domain of another organization`);
}

async function addUser(
  es: EventStore,
  args: { instanceId: string; orgId: string; creator: string; username: string; events: (id: string) => NewEvent[]; id?: string; schemaData?: SchemaData },
): Promise<ChangeDetails> {
  // A given ID: an import keeps the IDs of the export.
  const id = args.id || newId();
  const { result } = await withUniqueConflict(
    "User",
    () => usernameTaken(args.username),
    () =>
      es.execute(async (w): Promise<ChangeDetails> => {
        // The organisation and the username in one statement, without Prisma (a hot path: bench/user-writes.ts);
        // the unique index on the login name still stops a concurrent creation of the same name.
        const name = args.username.toLowerCase();
        const { rows } = await w.sql.query<{ org: boolean; taken: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM orgs WHERE id = $1 AND instance_id = $2) AS org,
                  EXISTS (SELECT 1 FROM users WHERE instance_id = $2 AND login_name = $3) AS taken`,
          [args.orgId, args.instanceId, name],
        );
        if (!rows[0]?.org) throw errors.notFound("USER-0rg1", `organization "${args.orgId}" not found`);
        if (rows[0].taken) throw usernameTaken(args.username);
        await checkUsernameDomain(w, args.instanceId, args.orgId, name);
        const ref = { aggregateId: id, resourceOwner: args.orgId };
        const data = args.schemaData ? [{ ...ref, ...(await schemaDataChange(w, { instanceId: args.instanceId, ...args.schemaData })) }] : [];
        const stored = await w.push(args.instanceId, args.creator, [...args.events(id), ...data]);
        const last = stored[stored.length - 1]!;
        return { id, sequence: last.sequence, changeDate: last.createdAt, instanceId: args.instanceId, resourceOwner: args.orgId };
      }),
    "users",
  );
  return result;
}

/** With `box`, the new human is sent what proves its addresses (src/command/user-codes.ts `codesForHuman`). */
export async function createHuman(
  es: EventStore,
  args: {
    instanceId: string;
    orgId: string;
    creator: string;
    human: NewHuman;
    passwordHash?: string;
    passwordChangeRequired?: boolean;
    box?: SecretBox;
    schemaData?: SchemaData;
    /** Accounts at identity providers the new user is linked to (one created through a provider). */
    links?: IdpLink[];
  },
): Promise<ChangeDetails> {
  const h = args.human;
  const displayName = h.displayName || `${h.givenName} ${h.familyName}`;
  // A human linked to an identity provider signs in there: no initial-password mail (an unverified address still gets its code).
  const needsPassword = !args.passwordHash && !args.links?.length;
  const codes = args.box ? codesForHuman(args.box, es.clock.now(), { ...h, needsPassword }) : [];
  return addUser(es, {
    ...args,
    username: h.username,
    events: (id) => [
      humanAdded.event(
        { aggregateId: id, resourceOwner: args.orgId },
        { ...h, displayName, passwordHash: args.passwordHash ?? null, passwordChangeRequired: !!args.passwordChangeRequired },
      ),
      ...codes.map((c) => ({ ...c, aggregateId: id, resourceOwner: args.orgId })),
      ...(args.links ?? []).map((l) => idpLinkAdded.event({ aggregateId: id, resourceOwner: args.orgId }, { ...l })),
    ],
  });
}

export async function createMachine(
  es: EventStore,
  args: { instanceId: string; orgId: string; creator: string; machine: NewMachine; id?: string; schemaData?: SchemaData },
): Promise<ChangeDetails> {
  const m = args.machine;
  return addUser(es, {
    ...args,
    username: m.username,
    events: (id) => [
      machineAdded.event(
        { aggregateId: id, resourceOwner: args.orgId },
        { username: m.username, displayName: m.name, description: m.description ?? "", accessTokenType: m.accessTokenType },
      ),
    ],
  });
}

function expectKind(u: UserRow, kind: "human" | "machine", what: string) {
  if (u.kind !== kind) throw errors.failedPrecondition("USER-k1nd", `${what} applies to ${kind} users only; user "${u.id}" is a ${u.kind}`);
}

/** A user schema and the user's data for it (src/command/user-schemas.ts checks the data). */
export interface SchemaData {
  schemaId: string;
  data: object;
}

export interface UserPatch {
  username?: string;
  schemaData?: SchemaData;
  human?: Partial<HumanProfile> & { email?: { address: string; verified: boolean }; phone?: { number: string; verified: boolean } };
  machine?: Partial<Omit<NewMachine, "username">>;
}

/** With `box`, a new unverified e-mail address or phone number is sent a code. */
export function patchUser(es: EventStore, a: { instanceId: string; id: string; creator: string; patch: UserPatch; box?: SecretBox }): Promise<ChangeDetails> {
  const { patch } = a;
  return withUniqueConflict(
    "User",
    () => usernameTaken(patch.username ?? ""),
    () =>
      changeUser(es, a, async (u, w) => {
        let wanted: UserChanges = { username: patch.username };
        if (patch.human) {
          expectKind(u, "human", "user.human");
          const { email, phone, ...profile } = patch.human;
          wanted = { ...wanted, ...profile };
          if (email) wanted = { ...wanted, email: email.address, emailVerified: email.verified };
          if (phone) wanted = { ...wanted, phone: phone.number || null, phoneVerified: phone.number ? phone.verified : false };
        }
        if (patch.machine) {
          expectKind(u, "machine", "user.machine");
          const { name, ...rest } = patch.machine;
          wanted = { ...wanted, ...rest, displayName: name };
        }
        const dataChange = patch.schemaData ? [await schemaDataChange(w, { instanceId: a.instanceId, ...patch.schemaData })] : [];
        const changed = changedFields(u, wanted);
        if (!Object.keys(changed).length) return dataChange;
        if (changed.username !== undefined) await checkUsernameFree(w, a.instanceId, u.orgId, changed.username, u.id);
        const change = (u.kind === "human" ? humanChanged : machineChanged).change(changed);
        if (!a.box || u.kind !== "human") return [change, ...dataChange];
        const emailTouched = changed.email !== undefined || changed.emailVerified === false;
        const phoneTouched = changed.phone !== undefined || changed.phoneVerified === false;
        const codes = codesForHuman(a.box, w.clock.now(), {
          email: emailTouched ? (changed.email ?? u.email) : null,
          emailVerified: changed.emailVerified ?? u.emailVerified,
          phone: phoneTouched ? (changed.phone === undefined ? u.phone : changed.phone) : null,
          phoneVerified: changed.phoneVerified ?? u.phoneVerified,
        });
        return [change, ...codes, ...dataChange];
      }),
  );
}

/** Lock, unlock, deactivate, reactivate: each only from the states it makes sense in. */
export type StateAction = "lock" | "unlock" | "deactivate" | "reactivate";

const stateActions: Record<StateAction, { from: string[]; event: () => EventChange<object, "user">; already: string }> = {
  lock: { from: ["active", "initial"], event: () => userLocked.change(), already: "locked" },
  unlock: { from: ["locked"], event: () => userUnlocked.change(), already: "" },
  deactivate: { from: ["active", "initial", "locked"], event: () => userDeactivated.change(), already: "inactive" },
  reactivate: { from: ["inactive"], event: () => userReactivated.change(), already: "" },
};

export function changeUserState(es: EventStore, a: { instanceId: string; id: string; creator: string; action: StateAction }): Promise<ChangeDetails> {
  const rule = stateActions[a.action];
  return changeUser(es, a, (u) => {
    // Repeating an action is a success without a change, like a patch that changes nothing.
    if (rule.already && u.state === rule.already) return [];
    if (!rule.from.includes(u.state)) {
      throw errors.failedPrecondition("USER-st4t", `cannot ${a.action} user "${u.id}": its state is ${u.state}`);
    }
    return [rule.event()];
  });
}

export function setPassword(
  es: EventStore,
  a: { instanceId: string; id: string; creator: string; passwordHash: string; changeRequired: boolean },
): Promise<ChangeDetails> {
  return changeUser(es, a, (u) => {
    expectKind(u, "human", "a password");
    return [passwordChanged.change({ passwordHash: a.passwordHash, changeRequired: a.changeRequired })];
  });
}

/**
 * Removes the user; its grants (refresh tokens, and the access token issued with each) are revoked after it, so
 * that none is left standing for a user that is gone. Its other access tokens are not stored anywhere: the token
 * checks refuse a subject that no longer exists (`usableUser`).
 */
export async function deleteUser(es: EventStore, a: { instanceId: string; id: string; creator: string }): Promise<ChangeDetails> {
  const details = await changeUser(es, a, () => [userRemoved.change()]);
  const { result: grants } = await es.execute((w) =>
    w.tx.refreshToken.findMany({ where: { instanceId: a.instanceId, userId: a.id, revoked: false }, select: { id: true } }),
  );
  for (const g of grants) await revokeRefreshToken(es, { instanceId: a.instanceId, id: g.id, creator: a.creator });
  return details;
}

/** A new client secret, returned once; only its hash is kept. */
export async function generateClientSecret(es: EventStore, a: { instanceId: string; id: string; creator: string }) {
  const secret = randomBytes(32).toString("base64url");
  const secretHash = await hashPassword(secret);
  let clientId = "";
  const details = await changeUser(es, a, (u) => {
    expectKind(u, "machine", "a client secret");
    clientId = u.username;
    return [secretSet.change({ secretHash })];
  });
  return { details, clientId, secret };
}

export function removeClientSecret(es: EventStore, a: { instanceId: string; id: string; creator: string }): Promise<ChangeDetails> {
  return changeUser(es, a, (u) => {
    expectKind(u, "machine", "a client secret");
    return u.secretHash ? [secretRemoved.change()] : [];
  });
}

/** An RSA key pair; the public half is kept, the private half goes to the caller once in a JSON key file. */
export async function addMachineKey(es: EventStore, a: { instanceId: string; id: string; creator: string; expiresAt: Date | null }) {
  const keyId = newId();
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const details = await changeUser(es, a, (u) => {
    expectKind(u, "machine", "a key");
    return [keyAdded.change({ keyId, publicKey, expiresAt: a.expiresAt?.toISOString() ?? null })];
  });
  const keyFile = {
    type: "serviceaccount",
    keyId,
    key: privateKey,
    userId: a.id,
    expirationDate: a.expiresAt?.toISOString() ?? null,
  };
  return { details, keyId, keyContent: JSON.stringify(keyFile) };
}

export function removeMachineKey(es: EventStore, a: { instanceId: string; id: string; creator: string; keyId: string }): Promise<ChangeDetails> {
  return changeUser(es, a, async (u, w) => {
    const key = await w.tx.machineKey.findFirst({ where: { id: a.keyId, userId: u.id } });
    if (!key) throw errors.notFound("USER-k3y0", `key "${a.keyId}" of user "${u.id}" not found`);
    return [keyRemoved.change({ keyId: a.keyId })];
  });
}

export async function addPersonalAccessToken(es: EventStore, a: { instanceId: string; id: string; creator: string; expiresAt: Date | null }) {
  const { token, hash } = newPersonalAccessToken();
  const tokenId = newId();
  const details = await changeUser(es, a, (u) => {
    expectKind(u, "machine", "a personal access token");
    return [patAdded.change({ tokenId, tokenHash: hash, expiresAt: a.expiresAt?.toISOString() ?? null })];
  });
  return { details, tokenId, token };
}

export function removePersonalAccessToken(es: EventStore, a: { instanceId: string; id: string; creator: string; tokenId: string }): Promise<ChangeDetails> {
  return changeUser(es, a, async (u, w) => {
    const pat = await w.tx.personalAccessToken.findFirst({ where: { id: a.tokenId, userId: u.id } });
    if (!pat) throw errors.notFound("USER-p4t0", `personal access token "${a.tokenId}" of user "${u.id}" not found`);
    return [patRemoved.change({ tokenId: a.tokenId })];
  });
}

/** Events that add a service (machine) user to an organisation. */
export function machineUserEvents(userId: string, orgId: string, username: string, displayName = username): NewEvent[] {
  return [machineAdded.event({ aggregateId: userId, resourceOwner: orgId }, { username, displayName })];
}

/** Events that give a user a personal access token; the token itself is returned once and never stored. */
export function patEvents(userId: string, orgId: string, expiresAt: Date | null = null): { token: string; events: NewEvent[] } {
  const { token, hash } = newPersonalAccessToken();
  return {
    token,
    events: [patAdded.event({ aggregateId: userId, resourceOwner: orgId }, { tokenId: newId(), tokenHash: hash, expiresAt: expiresAt?.toISOString() ?? null })],
  };
}

/** The event that makes a user a member of a context with roles (system membership: contextId ""). */
export function memberEvent(contextType: ContextType, contextId: string, userId: string, roles: string[]): NewEvent {
  const added = { system: systemMemberAdded, instance: instanceMemberAdded, org: orgMemberAdded }[contextType];
  return added.event({ aggregateId: contextType === "system" ? "system" : contextId, resourceOwner: contextId }, { userId, roles });
}

/** Adds a service user with a PAT and memberships in one transaction (first start and test fixtures). */
export async function addServiceUser(
  es: EventStore,
  args: { instanceId: string; orgId: string; username: string; memberships: { type: ContextType; id: string; roles: string[] }[]; creator: string },
): Promise<{ userId: string; token: string }> {
  const userId = newId();
  const pat = patEvents(userId, args.orgId);
  await es.execute(async (w) => {
    await w.push(args.instanceId, args.creator, [
      ...machineUserEvents(userId, args.orgId, args.username),
      ...pat.events,
      ...args.memberships.filter((m) => m.type !== "system").map((m) => memberEvent(m.type, m.id, userId, m.roles)),
    ]);
    const system = args.memberships.filter((m) => m.type === "system");
    if (system.length)
      await w.push(
        "",
        args.creator,
        system.map((m) => memberEvent("system", "", userId, m.roles)),
      );
  });
  return { userId, token: pat.token };
}
