import { errors } from "../errors/errors.js";
import type { EventStore, NewEvent, Tx } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { changeAggregate, withUniqueConflict, type ChangeDetails } from "./aggregate.js";
import {
  instanceDefaultOrgSet,
  orgAdded,
  orgChanged,
  orgDeactivated,
  orgDomainAdded,
  orgDomainPrimarySet,
  orgDomainRemoved,
  orgReactivated,
  orgRemoved,
} from "../events/index.js";

/** An organisation owns itself. */
export function orgAddedEvent(orgId: string, name: string, primaryDomain: string): NewEvent {
  return orgAdded.event({ aggregateId: orgId, resourceOwner: orgId }, { name, primaryDomain });
}

/** `<name slug>.<domain>`: an organisation's generated primary domain. */
export function orgDomain(name: string, domain: string): string {
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "org";
  return `${slug}.${domain.toLowerCase()}`;
}

const nameTaken = (name: string) => errors.alreadyExists("ORG-n4me", `an organization named "${name}" already exists in this instance`);

/** The name, and the domain generated from it, are nobody else's (an organisation may have verified that domain). */
async function checkNameFree(tx: Tx, instanceId: string, name: string, domain: string, except?: string) {
  const notExcepted = except ? { NOT: { id: except } } : {};
  const other = await tx.org.findFirst({
    where: { instanceId, OR: [{ name: { equals: name, mode: "insensitive" } }, { primaryDomain: domain }], ...notExcepted },
    select: { id: true },
  });
  const verified = await tx.orgDomain.findFirst({
    where: { instanceId, domain, verified: true, ...(except ? { NOT: { orgId: except } } : {}) },
    select: { orgId: true },
  });
  if (other || verified) throw nameTaken(name);
}

/** Adds an organisation to an instance; its primary domain comes from its name and the instance's domain. */
export async function addOrg(es: EventStore, args: { instanceId: string; name: string; domain: string; creator: string }): Promise<string> {
  return (await createOrg(es, args)).id;
}

export async function createOrg(
  es: EventStore,
  args: { instanceId: string; name: string; domain: string; creator: string; id?: string },
): Promise<ChangeDetails> {
  // A given ID: an import keeps the IDs of the export.
  const id = args.id || newId();
  const primaryDomain = orgDomain(args.name, args.domain);
  const { result } = await withUniqueConflict(
    "Org",
    () => nameTaken(args.name),
    () =>
      es.execute(async (w): Promise<ChangeDetails> => {
        await checkNameFree(w.tx, args.instanceId, args.name, primaryDomain);
        const [e] = await w.push(args.instanceId, args.creator, [orgAddedEvent(id, args.name, primaryDomain)]);
        return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: args.instanceId, resourceOwner: id };
      }),
  );
  return result;
}

type OrgAction = "rename" | "deactivate" | "reactivate" | "remove";

/** Every change to an existing organisation. The instance's default organisation cannot be deactivated or removed. */
export function changeOrg(es: EventStore, a: { instanceId: string; id: string; creator: string; action: OrgAction; name?: string }): Promise<ChangeDetails> {
  return withUniqueConflict(
    "Org",
    () => nameTaken(a.name ?? ""),
    () =>
      changeAggregate(es, {
        aggregateType: "org",
        instanceId: a.instanceId,
        id: a.id,
        creator: a.creator,
        load: (w) => w.tx.org.findUnique({ where: { id: a.id } }),
        notFound: () => errors.notFound("ORG-n0tf", `organization "${a.id}" not found`),
        ownerOf: (o) => o.id,
        decide: async (org, w) => {
          const instance = await w.tx.instance.findUniqueOrThrow({ where: { id: a.instanceId } });
          const isDefault = instance.defaultOrgId === org.id;
          switch (a.action) {
            case "rename": {
              if (a.name === undefined || a.name === org.name) return [];
              // The generated domain follows the name and keeps the instance domain it was made with; it stays
              // primary where it was.
              const old = await w.tx.orgDomain.findFirst({ where: { orgId: org.id, generated: true } });
              const oldDomain = old?.domain ?? org.primaryDomain;
              const domain = orgDomain(a.name, oldDomain.slice(oldDomain.indexOf(".") + 1));
              await checkNameFree(w.tx, a.instanceId, a.name, domain, org.id);
              if (domain === oldDomain) return [orgChanged.change({ name: a.name })];
              if (await w.tx.orgDomain.findUnique({ where: { orgId_domain: { orgId: org.id, domain } } }))
                throw errors.failedPrecondition("ORG-d0m1", `the new name's domain "${domain}" is one the organization added: remove it first`);
              return [
                orgChanged.change({ name: a.name }),
                orgDomainRemoved.change({ domain: oldDomain }),
                orgDomainAdded.change({ domain, verified: true, generated: true }),
                ...(old?.isPrimary !== false ? [orgDomainPrimarySet.change({ domain })] : []),
              ];
            }
            case "deactivate":
              if (isDefault) throw errors.failedPrecondition("ORG-d3f1", "the instance's default organization cannot be deactivated");
              return org.state === "inactive" ? [] : [orgDeactivated.change()];
            case "reactivate":
              return org.state === "active" ? [] : [orgReactivated.change()];
            case "remove":
              if (isDefault)
                throw errors.failedPrecondition("ORG-d3f2", "the instance's default organization cannot be removed; set another one as default first");
              return [orgRemoved.change()];
          }
        },
      }),
  );
}

export async function setDefaultOrg(es: EventStore, a: { instanceId: string; orgId: string; creator: string }): Promise<ChangeDetails> {
  const { result } = await es.execute(async (w): Promise<ChangeDetails> => {
    await w.lock(a.instanceId, "instance", a.instanceId);
    const org = await w.tx.org.findFirst({ where: { id: a.orgId, instanceId: a.instanceId } });
    if (!org) throw errors.notFound("ORG-n0t2", `organization "${a.orgId}" not found`);
    if (org.state !== "active") throw errors.failedPrecondition("ORG-1n4c", `organization "${a.orgId}" is inactive`);
    const instance = await w.tx.instance.findUniqueOrThrow({ where: { id: a.instanceId } });
    if (instance.defaultOrgId === org.id)
      return { id: org.id, sequence: instance.sequence, changeDate: instance.changeDate, instanceId: a.instanceId, resourceOwner: a.instanceId };
    const [e] = await w.push(a.instanceId, a.creator, [
      instanceDefaultOrgSet.event({ aggregateId: a.instanceId, resourceOwner: a.instanceId }, { orgId: org.id }),
    ]);
    return { id: org.id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: a.instanceId, resourceOwner: a.instanceId };
  });
  return result;
}
