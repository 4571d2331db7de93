import type { Prisma } from "../../gen/prisma/client.js";
import type { EventStore, StoredEvent, Tx } from "../eventstore/eventstore.js";
import {
  humanAdded,
  humanChanged,
  keyAdded,
  keyRemoved,
  machineAdded,
  machineChanged,
  passwordChanged,
  passwordCheckFailed,
  passwordCheckSucceeded,
  totpCheckFailed,
  totpCheckSucceeded,
  patAdded,
  patRemoved,
  secretRemoved,
  secretSet,
  userDeactivated,
  userLocked,
  userReactivated,
  userRemoved,
  userUnlocked,
  type HumanAdded,
  type MachineAdded,
  type UserChanges,
} from "./events.js";

/** A credential row (key or PAT) of a user, from its event. */
export function credentialRow(e: StoredEvent<{ expiresAt: string | null }>, id: string) {
  return { id, instanceId: e.instanceId, expiresAt: e.payload.expiresAt ? new Date(e.payload.expiresAt) : null, createdAt: e.createdAt };
}

/** Projections of users and their credentials. */
export function registerUserReducers(es: EventStore): void {
  const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.UserUpdateInput = {}): Promise<void> => {
    await tx.user.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
  };

  // Both kinds share the row; the fields of the other kind stay empty (null).
  const addUser = async (tx: Tx, e: StoredEvent<object>, kind: "human" | "machine", p: Partial<HumanAdded> & Partial<MachineAdded> & { username: string }) => {
    const passwordHash = p.passwordHash ?? null;
    await tx.user.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        orgId: e.resourceOwner,
        username: p.username,
        loginName: p.username.toLowerCase(),
        kind,
        state: kind === "human" && !passwordHash ? "initial" : "active",
        displayName: p.displayName || p.username,
        givenName: p.givenName ?? null,
        familyName: p.familyName ?? null,
        nickName: p.nickName ?? null,
        preferredLanguage: p.preferredLanguage ?? null,
        email: p.email ?? null,
        emailVerified: !!p.emailVerified,
        phone: p.phone ?? null,
        phoneVerified: !!p.phoneVerified,
        passwordHash,
        passwordChangeRequired: !!p.passwordChangeRequired,
        passwordChanged: passwordHash ? e.createdAt : null,
        description: p.description ?? null,
        accessTokenType: p.accessTokenType ?? "opaque",
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  };
  es.on(humanAdded, (tx, e) => addUser(tx, e, "human", e.payload));
  es.on(machineAdded, (tx, e) => addUser(tx, e, "machine", e.payload));

  const changeUser = async (tx: Tx, e: StoredEvent<UserChanges>) => {
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
  es.on(humanChanged, changeUser);
  es.on(machineChanged, changeUser);

  es.on(userLocked, (tx, e) => touch(tx, e, { state: "locked" }));
  es.on(userDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  // Unlocking and reactivating return to "initial" when a human still has no password.
  const back = async (tx: Tx, e: StoredEvent<object>) => {
    const u = await tx.user.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { kind: true, passwordHash: true } });
    await touch(tx, e, { state: u.kind === "human" && !u.passwordHash ? "initial" : "active", passwordFailures: 0, otpFailures: 0 });
  };
  es.on(userUnlocked, back);
  es.on(userReactivated, back);

  es.on(userRemoved, async (tx, e) => {
    await removeUsersData(tx, [e.aggregateId]);
    await tx.user.delete({ where: { id: e.aggregateId } });
  });

  es.on(passwordChanged, async (tx, e) => {
    const u = await tx.user.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { state: true } });
    await touch(tx, e, {
      passwordHash: e.payload.passwordHash,
      passwordChangeRequired: e.payload.changeRequired,
      passwordChanged: e.createdAt,
      passwordFailures: 0,
      ...(u.state === "initial" ? { state: "active" } : {}),
    });
  });
  es.on(passwordCheckSucceeded, (tx, e) => touch(tx, e, { passwordFailures: 0 }));
  es.on(passwordCheckFailed, (tx, e) => touch(tx, e, { passwordFailures: { increment: 1 } }));
  es.on(totpCheckFailed, (tx, e) => touch(tx, e, { otpFailures: { increment: 1 } }));
  es.on(totpCheckSucceeded, (tx, e) => touch(tx, e, { otpFailures: 0 }));

  es.on(secretSet, (tx, e) => touch(tx, e, { secretHash: e.payload.secretHash }));
  es.on(secretRemoved, (tx, e) => touch(tx, e, { secretHash: null }));

  // Key pairs and PATs: a row each, owned by the user; only the public key or the token's hash is stored.
  es.on(keyAdded, async (tx, e) => {
    await tx.machineKey.create({ data: { ...credentialRow(e, e.payload.keyId), userId: e.aggregateId, publicKey: e.payload.publicKey } });
    await touch(tx, e);
  });
  es.on(keyRemoved, async (tx, e) => {
    await tx.machineKey.deleteMany({ where: { id: e.payload.keyId, userId: e.aggregateId } });
    await touch(tx, e);
  });
  es.on(patAdded, async (tx, e) => {
    await tx.personalAccessToken.create({ data: { ...credentialRow(e, e.payload.tokenId), userId: e.aggregateId, tokenHash: e.payload.tokenHash } });
    await touch(tx, e);
  });
  es.on(patRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { id: e.payload.tokenId, userId: e.aggregateId } });
    await touch(tx, e);
  });
}

/**
 * Everything kept per user, for users that go (removed, or with their organisation): credentials, second
 * factors, pending codes, links, metadata, sessions, grants and memberships. A leftover would outlive its
 * user: a security key's credential ID, unique in the instance, could never be registered again.
 */
export async function removeUsersData(tx: Tx, userIds: string[]): Promise<void> {
  const of = { userId: { in: userIds } };
  await tx.personalAccessToken.deleteMany({ where: of });
  await tx.machineKey.deleteMany({ where: of });
  await tx.membership.deleteMany({ where: of });
  await tx.loginSession.deleteMany({ where: of });
  await tx.userGrant.deleteMany({ where: of });
  await tx.userTotp.deleteMany({ where: of });
  await tx.userCode.deleteMany({ where: of });
  await tx.userOtpChannel.deleteMany({ where: of });
  await tx.userWebauthnKey.deleteMany({ where: of });
  await tx.userIdpLink.deleteMany({ where: of });
  await tx.userMetadata.deleteMany({ where: of });
}
