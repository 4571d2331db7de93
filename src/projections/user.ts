import type { Prisma } from "../../gen/prisma/client.js";
import type { Sql, StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";

/** A user's details (sequence, change date) are those of its newest event, whichever table the event is about. */
const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.UserUpdateInput = {}): Promise<void> => {
  await tx.user.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

/**
 * A user's newest event that changes nothing else of its row: the sequence and change date, in a statement of
 * its own (a user's creation sends its first code right after it: Prisma's update would read the whole row back).
 */
const advance = async (sql: Sql, e: StoredEvent<object>): Promise<void> => {
  const { rowCount } = await sql.query("UPDATE users SET sequence = $1, change_date = $2 WHERE id = $3", [e.sequence, e.createdAt, e.aggregateId]);
  if (!rowCount) throw new Error(`${e.type}: user ${e.aggregateId} not found`);
};

// Both kinds share the row; the fields of the other kind stay empty (null). Creating users is a hot path
// (bench/user-writes.ts): one statement without Prisma; the login name's unique index refuses a taken name.
const addUser = async (
  sql: Sql,
  e: StoredEvent<object>,
  kind: "human" | "machine",
  p: Partial<events.HumanAdded> & Partial<events.MachineAdded> & { username: string },
) => {
  const passwordHash = p.passwordHash ?? null;
  await sql.query(
    `INSERT INTO users (id, instance_id, org_id, username, login_name, kind, state, display_name, given_name, family_name, nick_name,
       preferred_language, email, email_verified, phone, phone_verified, password_hash, password_change_required, password_changed,
       description, access_token_type, sequence, created_at, change_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $23)`,
    [
      e.aggregateId,
      e.instanceId,
      e.resourceOwner,
      p.username,
      p.username.toLowerCase(),
      kind,
      kind === "human" && !passwordHash ? "initial" : "active",
      p.displayName || p.username,
      p.givenName ?? null,
      p.familyName ?? null,
      p.nickName ?? null,
      p.preferredLanguage ?? null,
      p.email ?? null,
      !!p.emailVerified,
      p.phone ?? null,
      !!p.phoneVerified,
      passwordHash,
      !!p.passwordChangeRequired,
      passwordHash ? e.createdAt : null,
      p.description ?? null,
      p.accessTokenType ?? "opaque",
      e.sequence,
      e.createdAt,
    ],
  );
};

const changeUser = async (tx: Tx, e: StoredEvent<events.UserChanges>) => {
  // The projection's columns, named one by one: a field a change event does not define is not projected.
  const p = e.payload;
  await touch(tx, e, {
    username: p.username,
    ...(p.username !== undefined ? { loginName: p.username.toLowerCase() } : {}),
    displayName: p.displayName,
    givenName: p.givenName,
    familyName: p.familyName,
    nickName: p.nickName,
    preferredLanguage: p.preferredLanguage,
    email: p.email,
    emailVerified: p.emailVerified,
    phone: p.phone,
    phoneVerified: p.phoneVerified,
    description: p.description,
    accessTokenType: p.accessTokenType,
  });
};

// Unlocking and reactivating return to "initial" when a human still has no password.
const back = async (tx: Tx, e: StoredEvent<object>) => {
  const u = await tx.user.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { kind: true, passwordHash: true } });
  await touch(tx, e, { state: u.kind === "human" && !u.passwordHash ? "initial" : "active", passwordFailures: 0, otpFailures: 0 });
};

/** Users, both kinds; their credentials, codes and other rows are in their own tables. */
// Version 2: a human linked to an identity provider is active without a password (it signs in there).
export const users = defineProjection("user", 2, (on) => {
  on(events.humanAdded, (_tx, e, sql) => addUser(sql, e, "human", e.payload));
  on(events.machineAdded, (_tx, e, sql) => addUser(sql, e, "machine", e.payload));
  on(events.humanChanged, changeUser);
  on(events.machineChanged, changeUser);
  on(events.userLocked, (tx, e) => touch(tx, e, { state: "locked" }));
  on(events.userDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  on(events.userUnlocked, back);
  // "initial" means no way to sign in yet: an account at an identity provider is one (as in ZITADEL).
  on(events.idpLinkAdded, async (tx, e) => {
    const u = await tx.user.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { state: true } });
    await touch(tx, e, u.state === "initial" ? { state: "active" } : {});
  });
  on(events.idpLinkRemoved, (tx, e) => touch(tx, e));
  on(events.userReactivated, back);
  // What is kept per user goes in each table's projection: credentials, second factors, pending codes, links,
  // metadata, sessions, grants and memberships.
  on(events.userRemoved, async (tx, e) => {
    await tx.user.delete({ where: { id: e.aggregateId } });
  });
  on(events.passwordChanged, async (tx, e) => {
    const u = await tx.user.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { state: true } });
    await touch(tx, e, {
      passwordHash: e.payload.passwordHash,
      passwordChangeRequired: e.payload.changeRequired,
      passwordChanged: e.createdAt,
      passwordFailures: 0,
      ...(u.state === "initial" ? { state: "active" } : {}),
    });
  });
  on(events.passwordCheckSucceeded, (tx, e) => touch(tx, e, { passwordFailures: 0 }));
  on(events.passwordCheckFailed, (tx, e) => touch(tx, e, { passwordFailures: { increment: 1 } }));
  on(events.totpCheckFailed, (tx, e) => touch(tx, e, { otpFailures: { increment: 1 } }));
  on(events.totpCheckSucceeded, (tx, e) => touch(tx, e, { otpFailures: 0 }));
  on(events.secretSet, (tx, e) => touch(tx, e, { secretHash: e.payload.secretHash }));
  on(events.secretRemoved, (tx, e) => touch(tx, e, { secretHash: null }));
  // Events about the user's rows in other tables advance its sequence.
  on(events.keyAdded, (tx, e) => touch(tx, e));
  on(events.keyRemoved, (tx, e) => touch(tx, e));
  on(events.patAdded, (tx, e) => touch(tx, e));
  on(events.patRemoved, (tx, e) => touch(tx, e));
  on(events.userMetadataSet, (tx, e) => touch(tx, e));
  on(events.userMetadataRemoved, (tx, e) => touch(tx, e));
  on(events.emailCodeAdded, (_tx, e, sql) => advance(sql, e));
  on(events.phoneCodeAdded, (_tx, e, sql) => advance(sql, e));
  on(events.passwordCodeAdded, (_tx, e, sql) => advance(sql, e));
  on(events.unlockCodeAdded, (_tx, e, sql) => advance(sql, e));
  on(events.otpEmailCodeAdded, (_tx, e, sql) => advance(sql, e));
  on(events.otpSmsCodeAdded, (_tx, e, sql) => advance(sql, e));
  on(events.userCodeFailed, (tx, e) => touch(tx, e));
  // A used code is gone (user-code.ts), and the address it proved is verified.
  on(events.emailVerified, (tx, e) => touch(tx, e, { emailVerified: true }));
  on(events.phoneVerified, (tx, e) => touch(tx, e, { phoneVerified: true }));
  on(events.userSchemaDataSet, (tx, e) => {
    const p = e.payload;
    return touch(tx, e, { schemaId: p.schemaId, schemaRevision: p.schemaRevision, data: p.data });
  });
  on(events.userDomainClaimed, (tx, e) => touch(tx, e, { username: e.payload.username, loginName: e.payload.username.toLowerCase() }));
  // The organisation's users go with it (their rows in other tables: each table's projection).
  on(events.orgRemoved, async (tx, e) => {
    await tx.user.deleteMany({ where: { orgId: e.aggregateId } });
  });
});
