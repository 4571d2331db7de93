import { Code, ConnectError } from "@connectrpc/connect";
import { errors } from "../errors/errors.js";
import type { PayloadOf } from "../eventstore/definition.js";
import type { NewEvent, Tx } from "../eventstore/eventstore.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { idpLinkAdded, idpLinkRemoved } from "../events/index.js";
import type { ChangeDetails } from "./aggregate.js";
import { changeUser } from "./user-aggregate.js";

/**
 * Users' accounts at identity providers, as imports bring them (the user import's `idps`, the data import's
 * `userLinks`). One external account links to one user; the links go with their user, organisation or provider.
 */
export interface IdpLink {
  idpId: string;
  externalUserId: string;
  displayName: string;
}

/**
 * The events that link a user (being added in the same transaction, or existing) to accounts at providers
 * of its instance or the system. NOT_FOUND naming the field (`fieldOf`) for an unknown provider, ALREADY_EXISTS for an
 * account linked to another user; a link the user already has is left out.
 */
export async function idpLinkEvents(
  tx: Tx,
  a: { instanceId: string; userId: string; orgId: string; links: IdpLink[]; fieldOf: (i: number) => string },
): Promise<NewEvent[]> {
  const out: NewEvent<PayloadOf<typeof idpLinkAdded>>[] = [];
  for (const [i, l] of a.links.entries()) {
    const idp = await tx.idp.findFirst({ where: { id: l.idpId, instanceId: { in: [a.instanceId, ""] } }, select: { id: true } });
    if (!idp) throw errors.notFound("LINK-1dp0", `${a.fieldOf(i)}.config_id: identity provider "${l.idpId}" not found`);
    const other = await tx.userIdpLink.findUnique({ where: { idpId_externalUserId: { idpId: l.idpId, externalUserId: l.externalUserId } } });
    if (other && other.userId !== a.userId) {
      throw errors.alreadyExists("LINK-3x1s", `${a.fieldOf(i)}.external_user_id: the account is linked to another user`);
    }
    if (other || out.some((e) => e.payload.idpId === l.idpId)) continue;
    out.push(idpLinkAdded.event({ aggregateId: a.userId, resourceOwner: a.orgId }, { ...l }));
  }
  return out;
}

/**
 * Links the user to an account at a provider (the links API): NOT_FOUND for a provider not of the user's instance
 * or the system, ALREADY_EXISTS when the account is linked to another user or the user to another account of the
 * provider. The same link again changes nothing.
 */
export function addIdpLink(es: EventStore, a: { instanceId: string; userId: string; creator: string; link: IdpLink }): Promise<ChangeDetails> {
  return changeUser(es, { instanceId: a.instanceId, id: a.userId, creator: a.creator }, async (u, w) => {
    const own = await w.tx.userIdpLink.findUnique({ where: { userId_idpId: { userId: u.id, idpId: a.link.idpId } } });
    if (own && own.externalUserId !== a.link.externalUserId) {
      throw errors.alreadyExists("LINK-0n3p", `user "${u.id}" is linked to another account of identity provider "${a.link.idpId}"`);
    }
    const events = await idpLinkEvents(w.tx, { instanceId: a.instanceId, userId: u.id, orgId: u.orgId, links: [a.link], fieldOf: () => "idp_id" });
    return events.length ? [idpLinkAdded.change({ ...a.link })] : [];
  });
}

/** Unlinks the user's account at a provider; NOT_FOUND when the user has no such link. */
export function removeIdpLink(
  es: EventStore,
  a: { instanceId: string; userId: string; creator: string; idpId: string; externalUserId: string },
): Promise<ChangeDetails> {
  return changeUser(es, { instanceId: a.instanceId, id: a.userId, creator: a.creator }, async (u, w) => {
    const link = await w.tx.userIdpLink.findUnique({ where: { userId_idpId: { userId: u.id, idpId: a.idpId } } });
    if (!link || link.externalUserId !== a.externalUserId) {
      throw errors.notFound("LINK-n0tf", `user "${u.id}" has no link to account "${a.externalUserId}" of identity provider "${a.idpId}"`);
    }
    return [idpLinkRemoved.change({ idpId: a.idpId, externalUserId: a.externalUserId })];
  });
}

/**
 * Links a user the sign-in found for an external account (auto-linking), as `addIdpLink` does; false, and
 * nothing written, when the account is linked to someone else or the user to another account of the provider.
 */
export async function linkFoundAccount(es: EventStore, a: { instanceId: string; userId: string; creator: string; link: IdpLink }): Promise<boolean> {
  try {
    await addIdpLink(es, a);
    return true;
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.AlreadyExists) return false;
    throw e;
  }
}
