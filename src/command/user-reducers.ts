import type { Prisma } from "../../gen/prisma/client.js";
import type { EventStore, StoredEvent, Tx } from "../eventstore/eventstore.js";
import { EventTypes } from "./events.js";

type P = Record<string, unknown>;
const str = (p: P, k: string) => (p[k] == null ? null : String(p[k]));

/** The projection's columns that user.human.changed / user.machine.changed may carry. */
const changeableColumns = [
  "username",
  "displayName",
  "givenName",
  "familyName",
  "nickName",
  "preferredLanguage",
  "email",
  "emailVerified",
  "phone",
  "phoneVerified",
  "description",
  "accessTokenType",
] as const;

/** Projections of users and their credentials. */
export function registerUserReducers(es: EventStore): void {
  const touch = async (tx: Tx, e: StoredEvent, data: Prisma.UserUpdateInput = {}): Promise<void> => {
    await tx.user.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
  };

  const addUser = (kind: "human" | "machine") => async (tx: Tx, e: StoredEvent) => {
    const p = e.payload;
    const username = String(p.username);
    const passwordHash = str(p, "passwordHash");
    await tx.user.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        orgId: e.resourceOwner,
        username,
        loginName: username.toLowerCase(),
        kind,
        state: kind === "human" && !passwordHash ? "initial" : "active",
        displayName: str(p, "displayName") || username,
        givenName: str(p, "givenName"),
        familyName: str(p, "familyName"),
        nickName: str(p, "nickName"),
        preferredLanguage: str(p, "preferredLanguage"),
        email: str(p, "email"),
        emailVerified: !!p.emailVerified,
        phone: str(p, "phone"),
        phoneVerified: !!p.phoneVerified,
        passwordHash,
        passwordChangeRequired: !!p.passwordChangeRequired,
        passwordChanged: passwordHash ? e.createdAt : null,
        description: str(p, "description"),
        accessTokenType: str(p, "accessTokenType") ?? "opaque",
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  };
  es.on(EventTypes.humanAdded, addUser("human"));
  es.on(EventTypes.machineAdded, addUser("machine"));

  const changeUser = async (tx: Tx, e: StoredEvent) => {
    const data: Record<string, unknown> = {};
    for (const k of changeableColumns) if (k in e.payload) data[k] = e.payload[k];
    if (typeof data.username === "string") data.loginName = data.username.toLowerCase();
    await touch(tx, e, data as Prisma.UserUpdateInput);
  };
  es.on(EventTypes.humanChanged, changeUser);
  es.on(EventTypes.machineChanged, changeUser);

  es.on(EventTypes.userLocked, (tx, e) => touch(tx, e, { state: "locked" }));
  es.on(EventTypes.userDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  // Unlocking and reactivating return to "initial" when a human still has no password.
  const back = async (tx: Tx, e: StoredEvent) => {
    const u = await tx.user.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { kind: true, passwordHash: true } });
    await touch(tx, e, { state: u.kind === "human" && !u.passwordHash ? "initial" : "active", passwordFailures: 0 });
  };
  es.on(EventTypes.userUnlocked, back);
  es.on(EventTypes.userReactivated, back);

  es.on(EventTypes.userRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { userId: e.aggregateId } });
    await tx.machineKey.deleteMany({ where: { userId: e.aggregateId } });
    await tx.membership.deleteMany({ where: { userId: e.aggregateId } });
    await tx.loginSession.deleteMany({ where: { userId: e.aggregateId } });
    await tx.userGrant.deleteMany({ where: { userId: e.aggregateId } });
    await tx.user.delete({ where: { id: e.aggregateId } });
  });

  es.on(EventTypes.passwordChanged, async (tx, e) => {
    const u = await tx.user.findUniqueOrThrow({ where: { id: e.aggregateId }, select: { state: true } });
    await touch(tx, e, {
      passwordHash: String(e.payload.passwordHash),
      passwordChangeRequired: !!e.payload.changeRequired,
      passwordChanged: e.createdAt,
      passwordFailures: 0,
      ...(u.state === "initial" ? { state: "active" } : {}),
    });
  });
  es.on(EventTypes.passwordCheckSucceeded, (tx, e) => touch(tx, e, { passwordFailures: 0 }));
  es.on(EventTypes.passwordCheckFailed, (tx, e) => touch(tx, e, { passwordFailures: { increment: 1 } }));

  es.on(EventTypes.secretSet, (tx, e) => touch(tx, e, { secretHash: String(e.payload.secretHash) }));
  es.on(EventTypes.secretRemoved, (tx, e) => touch(tx, e, { secretHash: null }));

  // Key pairs and PATs: a row each, owned by the user; only the public key or the token's hash is stored.
  const credential = (e: StoredEvent, idKey: string) => ({
    id: String(e.payload[idKey]),
    instanceId: e.instanceId,
    userId: e.aggregateId,
    expiresAt: e.payload.expiresAt ? new Date(String(e.payload.expiresAt)) : null,
    createdAt: e.createdAt,
  });
  es.on(EventTypes.keyAdded, async (tx, e) => {
    await tx.machineKey.create({ data: { ...credential(e, "keyId"), publicKey: String(e.payload.publicKey) } });
    await touch(tx, e);
  });
  es.on(EventTypes.keyRemoved, async (tx, e) => {
    await tx.machineKey.deleteMany({ where: { id: String(e.payload.keyId), userId: e.aggregateId } });
    await touch(tx, e);
  });
  es.on(EventTypes.patAdded, async (tx, e) => {
    await tx.personalAccessToken.create({ data: { ...credential(e, "tokenId"), tokenHash: String(e.payload.tokenHash) } });
    await touch(tx, e);
  });
  es.on(EventTypes.patRemoved, async (tx, e) => {
    await tx.personalAccessToken.deleteMany({ where: { id: String(e.payload.tokenId), userId: e.aggregateId } });
    await touch(tx, e);
  });
}
