import type { Prisma as P } from "../../gen/prisma/client.js";
import type { SecretBox } from "../crypto/secrets.js";
import { errors } from "../errors/errors.js";
import type { EventStore, EventWriter } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { ContextRef, Policy } from "../query/reuse.js";
import { EventTypes } from "./events.js";
import type { ResourceDetails } from "./targets.js";

export const GITLAB = 8;

export interface IdpConfig {
  name: string;
  options: Record<string, unknown>;
  clientId: string;
  scopes: string[];
}

export interface IdpDetails extends Omit<ResourceDetails, "instanceId"> {
  owner: ContextRef;
}

/** Projections of identity providers and of the children's state policies. */
export function registerIdpReducers(es: EventStore): void {
  es.on(EventTypes.gitlabIdpAdded, async (tx, e) => {
    const p = e.payload as unknown as IdpConfig & { ownerType: string; ownerId: string; ownerPolicy: string; clientSecret?: string };
    await tx.idp.create({
      data: {
        id: e.aggregateId,
        instanceId: e.instanceId,
        ownerType: p.ownerType,
        ownerId: p.ownerId,
        name: p.name,
        type: GITLAB,
        ownerPolicy: p.ownerPolicy,
        options: p.options as P.InputJsonValue,
        clientId: p.clientId,
        scopes: p.scopes,
        clientSecret: p.clientSecret ?? null,
        sequence: e.sequence,
        createdAt: e.createdAt,
        changeDate: e.createdAt,
      },
    });
  });
  es.on(EventTypes.gitlabIdpChanged, async (tx, e) => {
    const p = e.payload as Partial<IdpConfig> & { ownerPolicy?: string; clientSecret?: string };
    await tx.idp.update({
      where: { id: e.aggregateId },
      data: { ...p, options: p.options as P.InputJsonValue | undefined, sequence: e.sequence, changeDate: e.createdAt },
    });
  });
  es.on(EventTypes.idpStatePolicySet, async (tx, e) => {
    const p = e.payload as { contextType: string; contextId: string; policy: Policy };
    const key = { idpId_contextType_contextId: { idpId: e.aggregateId, contextType: p.contextType, contextId: p.contextId } };
    if (p.policy === "inherit") await tx.idpPolicy.deleteMany({ where: { idpId: e.aggregateId, contextType: p.contextType, contextId: p.contextId } });
    else {
      const data = { policy: p.policy, sequence: e.sequence, changeDate: e.createdAt };
      await tx.idpPolicy.upsert({ where: key, create: { idpId: e.aggregateId, contextType: p.contextType, contextId: p.contextId, ...data }, update: data });
    }
    await tx.idp.update({ where: { id: e.aggregateId }, data: { sequence: e.sequence, changeDate: e.createdAt } });
  });
  es.on(EventTypes.idpRemoved, async (tx, e) => {
    await tx.idpPolicy.deleteMany({ where: { idpId: e.aggregateId } });
    await tx.idp.delete({ where: { id: e.aggregateId } });
  });
}

/** The instance an event of a provider belongs to: "" for the system's. */
const eventInstance = (owner: ContextRef) => (owner.type === "system" ? "" : owner.instanceId);

export async function createGitlabIdp(
  es: EventStore,
  box: SecretBox,
  args: { owner: ContextRef; creator: string; config: IdpConfig; ownerPolicy: Policy; clientSecret?: string | undefined },
): Promise<IdpDetails> {
  const id = newId();
  const { result } = await es.execute(async (w) => {
    const [e] = await w.push(eventInstance(args.owner), args.creator, [
      {
        aggregateType: "idp",
        aggregateId: id,
        type: EventTypes.gitlabIdpAdded,
        payload: {
          ...args.config,
          ownerType: args.owner.type,
          ownerId: args.owner.id,
          ownerPolicy: args.ownerPolicy,
          ...(args.clientSecret ? { clientSecret: box.seal(args.clientSecret) } : {}),
        },
        resourceOwner: args.owner.id,
      },
    ]);
    return { id, sequence: e!.sequence, changeDate: e!.createdAt, owner: args.owner };
  });
  return result;
}

type IdpRow = Awaited<ReturnType<EventWriter["tx"]["idp"]["findFirstOrThrow"]>>;

/** Changes in the owning context: configuration and the owner's policy. Only what really changes is written. */
export async function patchIdpConfig(
  es: EventStore,
  box: SecretBox,
  args: { idp: IdpRow; owner: ContextRef; creator: string; changes: Partial<IdpConfig> & { ownerPolicy?: Policy; clientSecret?: string } },
): Promise<IdpDetails> {
  const { idp, owner } = args;
  const { result } = await es.execute(async (w) => {
    await w.sequenceOf(eventInstance(owner), "idp", idp.id);
    const fresh = await w.tx.idp.findUnique({ where: { id: idp.id } });
    if (!fresh) throw errors.notFound("IDP-g0ne", `identity provider "${idp.id}" not found`);
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const changed: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(args.changes)) {
      if (v === undefined || k === "clientSecret") continue;
      if (!same((fresh as Record<string, unknown>)[k], v)) changed[k] = v;
    }
    // A secret is write-only: a new one is always stored (it cannot be compared without decrypting).
    if (args.changes.clientSecret !== undefined) changed.clientSecret = box.seal(args.changes.clientSecret);
    if (!Object.keys(changed).length) return { id: fresh.id, sequence: fresh.sequence, changeDate: fresh.changeDate, owner };
    const [e] = await w.push(eventInstance(owner), args.creator, [
      { aggregateType: "idp", aggregateId: idp.id, type: EventTypes.gitlabIdpChanged, payload: changed, resourceOwner: owner.id },
    ]);
    return { id: idp.id, sequence: e!.sequence, changeDate: e!.createdAt, owner };
  });
  return result;
}

/** A child context's own state policy; inherit removes it. */
export async function setIdpStatePolicy(
  es: EventStore,
  args: { idp: IdpRow; owner: ContextRef; context: ContextRef; creator: string; policy: Policy },
): Promise<IdpDetails> {
  const { idp, owner, context } = args;
  const { result } = await es.execute(async (w) => {
    await w.sequenceOf(eventInstance(owner), "idp", idp.id);
    const fresh = await w.tx.idp.findUnique({ where: { id: idp.id } });
    if (!fresh) throw errors.notFound("IDP-g0n2", `identity provider "${idp.id}" not found`);
    const current = await w.tx.idpPolicy.findUnique({ where: { idpId_contextType_contextId: { idpId: idp.id, contextType: context.type, contextId: context.id } } });
    if ((current?.policy ?? "inherit") === args.policy) return { id: fresh.id, sequence: fresh.sequence, changeDate: fresh.changeDate, owner };
    const [e] = await w.push(eventInstance(owner), args.creator, [
      {
        aggregateType: "idp",
        aggregateId: idp.id,
        type: EventTypes.idpStatePolicySet,
        payload: { contextType: context.type, contextId: context.id, policy: args.policy },
        resourceOwner: owner.id,
      },
    ]);
    return { id: idp.id, sequence: e!.sequence, changeDate: e!.createdAt, owner };
  });
  return result;
}

export async function deleteIdp(es: EventStore, args: { idp: IdpRow; owner: ContextRef; creator: string }): Promise<IdpDetails> {
  const { result } = await es.execute(async (w) => {
    await w.sequenceOf(eventInstance(args.owner), "idp", args.idp.id);
    const fresh = await w.tx.idp.findUnique({ where: { id: args.idp.id } });
    if (!fresh) throw errors.notFound("IDP-g0n3", `identity provider "${args.idp.id}" not found`);
    const [e] = await w.push(eventInstance(args.owner), args.creator, [
      { aggregateType: "idp", aggregateId: args.idp.id, type: EventTypes.idpRemoved, payload: {}, resourceOwner: args.owner.id },
    ]);
    return { id: args.idp.id, sequence: e!.sequence, changeDate: e!.createdAt, owner: args.owner };
  });
  return result;
}
