import type { SecretBox } from "../crypto/secrets.js";
import { newSigningCertificate, type SigningCertificate } from "../crypto/signing-certificate.js";
import { dateOf } from "../domain/clock.js";
import { errors } from "../errors/errors.js";
import type { PayloadOf } from "../eventstore/definition.js";
import type { EventStore, EventWriter } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { type IdpQueries, ownerOf } from "../query/idps.js";
import type { ContextRef, Policy } from "../query/reuse.js";
import { type IdpConfig, type IdpKind, providerTypeOf } from "../domain/idps.js";
import { changedFields } from "./aggregate.js";
import { idpAdded, idpChanged, idpRemoved, idpStatePolicySet } from "../events/index.js";
import type { ResourceDetails } from "./targets.js";

export type { IdpConfig } from "../domain/idps.js";

export interface IdpDetails extends Omit<ResourceDetails, "instanceId"> {
  owner: ContextRef;
}

/** The instance an event of a provider belongs to: "" for the system's. */
const eventInstance = (owner: ContextRef) => (owner.type === "system" ? "" : owner.instanceId);

/** A new provider of `kind`; its secret (`secretFieldOf`) sealed. */
export async function createIdp(
  es: EventStore,
  box: SecretBox,
  args: { kind: IdpKind; owner: ContextRef; creator: string; config: IdpConfig; ownerPolicy: Policy; secret?: string | undefined; id?: string },
): Promise<IdpDetails> {
  // A given ID: an import keeps the IDs of the export (users' links name it).
  const id = args.id || newId();
  const { result } = await es.execute(async (w) => {
    const [e] = await w.push(eventInstance(args.owner), args.creator, [
      idpAdded.event(
        { aggregateId: id, resourceOwner: args.owner.id },
        {
          ...args.config,
          type: providerTypeOf[args.kind],
          ownerType: args.owner.type,
          ownerId: args.owner.id,
          ownerPolicy: args.ownerPolicy,
          ...(args.secret ? { secret: box.seal(args.secret) } : {}),
        },
      ),
    ]);
    return { id, sequence: e!.sequence, changeDate: e!.createdAt, owner: args.owner };
  });
  return result;
}

type IdpRow = Awaited<ReturnType<EventWriter["tx"]["idp"]["findFirstOrThrow"]>>;

/**
 * Changes in the owning context: name, options, the owner's policy, the whole configuration (`config`, already
 * merged with the stored one by the caller) and the secret. Only what really changes is written.
 */
export async function patchIdpConfig(
  es: EventStore,
  box: SecretBox,
  args: { idp: IdpRow; owner: ContextRef; creator: string; changes: Partial<IdpConfig> & { ownerPolicy?: Policy; secret?: string } },
): Promise<IdpDetails> {
  const { idp, owner } = args;
  const { result } = await es.execute(async (w) => {
    await w.lock(eventInstance(owner), "idp", idp.id);
    const fresh = await w.tx.idp.findUnique({ where: { id: idp.id } });
    if (!fresh) throw errors.notFound("IDP-g0ne", `identity provider "${idp.id}" not found`);
    const { secret, config, ...compared } = args.changes;
    const changed: PayloadOf<typeof idpChanged> = changedFields(fresh, compared);
    if (config !== undefined && !sameJson(fresh.config, config)) changed.config = config;
    // A secret is write-only: a new one is always stored (it cannot be compared without decrypting).
    if (secret !== undefined) changed.secret = box.seal(secret);
    if (!Object.keys(changed).length) return { id: fresh.id, sequence: fresh.sequence, changeDate: fresh.changeDate, owner };
    const [e] = await w.push(eventInstance(owner), args.creator, [idpChanged.event({ aggregateId: idp.id, resourceOwner: owner.id }, changed)]);
    return { id: idp.id, sequence: e!.sequence, changeDate: e!.createdAt, owner };
  });
  return result;
}

/**
 * The provider's secret, stored now as `made` when it has none yet (a SAML service provider's key pair, made at its
 * first use): under the provider's lock, so that concurrent first uses all get the one stored.
 */
export async function secretOrStored(es: EventStore, box: SecretBox, args: { idp: IdpRow; owner: ContextRef; made: string }): Promise<string> {
  const { idp, owner } = args;
  const { result } = await es.execute(async (w) => {
    await w.lock(eventInstance(owner), "idp", idp.id);
    const fresh = await w.tx.idp.findUnique({ where: { id: idp.id } });
    if (!fresh) throw errors.notFound("IDP-k3yg", `identity provider "${idp.id}" not found`);
    if (fresh.secret) return box.open(fresh.secret);
    await w.push(eventInstance(owner), "system", [idpChanged.event({ aggregateId: idp.id, resourceOwner: owner.id }, { secret: box.seal(args.made) })]);
    return args.made;
  });
  return result;
}

/**
 * A SAML provider's service-provider key pair (its secret): the stored one, else a new one stored now. The IdP's
 * administrator imports the certificate with our metadata, so it stays until the provider goes.
 */
export async function serviceProviderKeys(
  es: EventStore,
  box: SecretBox,
  idps: IdpQueries,
  p: { id: string; secret: string | undefined },
): Promise<SigningCertificate> {
  if (p.secret) return JSON.parse(p.secret) as SigningCertificate;
  const idp = await idps.byId(p.id);
  if (!idp) throw errors.notFound("IDP-sp0k", `identity provider "${p.id}" not found`);
  const made = await newSigningCertificate(`svc-iam saml ${p.id}`, dateOf(es.clock));
  return JSON.parse(await secretOrStored(es, box, { idp, owner: ownerOf(idp), made: JSON.stringify(made) })) as SigningCertificate;
}

/** Equal as JSON whatever the order of object keys (jsonb keeps its own order). */
function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
              .map(([k, x]) => [k, canonical(x)]),
          )
        : v;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** A child context's own state policy; inherit removes it. */
export async function setIdpStatePolicy(
  es: EventStore,
  args: { idp: IdpRow; owner: ContextRef; context: ContextRef; creator: string; policy: Policy },
): Promise<IdpDetails> {
  const { idp, owner, context } = args;
  const { result } = await es.execute(async (w) => {
    await w.lock(eventInstance(owner), "idp", idp.id);
    const fresh = await w.tx.idp.findUnique({ where: { id: idp.id } });
    if (!fresh) throw errors.notFound("IDP-g0n2", `identity provider "${idp.id}" not found`);
    const current = await w.tx.idpPolicy.findUnique({
      where: { idpId_contextType_contextId: { idpId: idp.id, contextType: context.type, contextId: context.id } },
    });
    if ((current?.policy ?? "inherit") === args.policy) return { id: fresh.id, sequence: fresh.sequence, changeDate: fresh.changeDate, owner };
    const [e] = await w.push(eventInstance(owner), args.creator, [
      idpStatePolicySet.event({ aggregateId: idp.id, resourceOwner: owner.id }, { contextType: context.type, contextId: context.id, policy: args.policy }),
    ]);
    return { id: idp.id, sequence: e!.sequence, changeDate: e!.createdAt, owner };
  });
  return result;
}

export async function deleteIdp(es: EventStore, args: { idp: IdpRow; owner: ContextRef; creator: string }): Promise<IdpDetails> {
  const { result } = await es.execute(async (w) => {
    await w.lock(eventInstance(args.owner), "idp", args.idp.id);
    const fresh = await w.tx.idp.findUnique({ where: { id: args.idp.id } });
    if (!fresh) throw errors.notFound("IDP-g0n3", `identity provider "${args.idp.id}" not found`);
    const [e] = await w.push(eventInstance(args.owner), args.creator, [idpRemoved.event({ aggregateId: args.idp.id, resourceOwner: args.owner.id })]);
    return { id: args.idp.id, sequence: e!.sequence, changeDate: e!.createdAt, owner: args.owner };
  });
  return result;
}
