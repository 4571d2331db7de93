import { errors } from "../errors/errors.js";
import type { PayloadOf } from "../eventstore/definition.js";
import type { NewEvent, Tx } from "../eventstore/eventstore.js";
import { idpLinkAdded } from "../events/index.js";

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
