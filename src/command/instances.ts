import type { EventStore, EventWriter, NewEvent } from "../eventstore/eventstore.js";
import { errors } from "../errors/errors.js";
import { newId } from "../ids.js";
import {
  featureSet,
  humanAdded,
  instanceAdded,
  instanceDefaultOrgSet,
  instanceDomainAdded,
  instanceDomainPrimarySet,
  instanceDomainRemoved,
  instanceChanged,
  instanceRemoved,
  settingsAggregateId,
} from "../events/index.js";
import { consoleAppEvents } from "./console-app.js";
import { orgAddedEvent, orgDomain } from "./orgs.js";
import { machineUserEvents, memberEvent, patEvents } from "./users.js";

/**
 * Instances: the first one made at first start (setup.ts) and further ones through the system API, by the
 * same events: the instance with its domains, its first organisation (the default) with the admin console's project
 * and application, an administrator (IAM_OWNER), and the preview API flags on.
 */
export type FirstAdmin =
  | { kind: "human"; username: string; passwordHash: string; passwordChangeRequired: boolean; givenName?: string; familyName?: string; email?: string }
  | { kind: "machine"; username: string; name: string };

export interface NewInstance {
  name: string;
  domains: string[];
  orgName: string;
  admins: FirstAdmin[];
}

/** The events of a new instance; `pats` the tokens made for its machine administrators (returned once). */
export function newInstanceEvents(instanceId: string, a: NewInstance): { events: NewEvent[]; adminIds: string[]; pats: string[] } {
  const orgId = newId();
  const instance = { aggregateId: instanceId, resourceOwner: instanceId };
  const events: NewEvent[] = [
    instanceAdded.event(instance, { name: a.name }),
    ...a.domains.map((domain) => instanceDomainAdded.event(instance, { domain })),
    instanceDomainPrimarySet.event(instance, { domain: a.domains[0]! }),
    orgAddedEvent(orgId, a.orgName, orgDomain(a.orgName, a.domains[0]!)),
    instanceDefaultOrgSet.event(instance, { orgId }),
    ...consoleAppEvents(orgId),
  ];
  const adminIds: string[] = [];
  const pats: string[] = [];
  for (const admin of a.admins) {
    const id = newId();
    adminIds.push(id);
    if (admin.kind === "human") {
      const { kind: _, ...human } = admin;
      const displayName = [admin.givenName, admin.familyName].filter(Boolean).join(" ") || "Administrator";
      events.push(humanAdded.event({ aggregateId: id, resourceOwner: orgId }, { ...human, displayName, emailVerified: !!admin.email }));
    } else {
      const pat = patEvents(id, orgId);
      events.push(...machineUserEvents(id, orgId, admin.username, admin.name), ...pat.events);
      pats.push(pat.token);
    }
    events.push(memberEvent("instance", instanceId, id, ["IAM_OWNER"]));
  }
  events.push(
    featureSet.event(
      { aggregateId: settingsAggregateId("feature", "instance", instanceId), resourceOwner: instanceId },
      {
        ownerType: "instance",
        ownerId: instanceId,
        set: { multitenancy_resources_api: true, multitenancy_settings: true, oidc_token_exchange: false },
        reset: [],
      },
    ),
  );
  return { events, adminIds, pats };
}

/** ALREADY_EXISTS naming the domain's place in the request when another instance serves it. */
async function checkDomainsFree(w: EventWriter, domains: string[], field: string): Promise<void> {
  for (const [i, domain] of domains.entries()) {
    const owner = await w.tx.instanceDomain.findUnique({ where: { domain } });
    if (owner) throw errors.alreadyExists("INST-d0mn", `${field}[${i}]: the domain "${domain}" is served by an instance already`);
  }
}

/** A new instance through the system API; the PAT of a machine administrator is returned once. */
export async function createInstance(es: EventStore, a: NewInstance & { creator: string }) {
  const instanceId = newId();
  const made = newInstanceEvents(instanceId, a);
  const { events } = await es.execute(async (w) => {
    await checkDomainsFree(w, a.domains, "domains");
    await w.push(instanceId, a.creator, made.events);
  });
  // The details are the instance aggregate's: its last event (its domains and default organisation follow its creation).
  return { instanceId, event: events.filter((e) => e.aggregateType === "instance" && e.aggregateId === instanceId).at(-1)!, pat: made.pats[0] };
}

async function changeInstance(es: EventStore, a: { instanceId: string; creator: string }, decide: (w: EventWriter) => Promise<NewEvent[]>) {
  const { events } = await es.execute(async (w) => {
    await w.lock(a.instanceId, "instance", a.instanceId);
    if (!(await w.tx.instance.findUnique({ where: { id: a.instanceId }, select: { id: true } })))
      throw errors.notFound("INST-n0tf", `instance "${a.instanceId}" not found`);
    await w.push(a.instanceId, a.creator, await decide(w));
  });
  return events;
}

const ref = (instanceId: string) => ({ aggregateId: instanceId, resourceOwner: instanceId });

export function renameInstance(es: EventStore, a: { instanceId: string; creator: string; name: string }) {
  return changeInstance(es, a, async () => [instanceChanged.event(ref(a.instanceId), { name: a.name })]);
}

export function addInstanceDomain(es: EventStore, a: { instanceId: string; creator: string; domain: string }) {
  return changeInstance(es, a, async (w) => {
    await checkDomainsFree(w, [a.domain], "domain");
    return [instanceDomainAdded.event(ref(a.instanceId), { domain: a.domain })];
  });
}

/** The instance keeps at least one domain, and its primary one (FAILED_PRECONDITION). */
export function removeInstanceDomain(es: EventStore, a: { instanceId: string; creator: string; domain: string }) {
  return changeInstance(es, a, async (w) => {
    const domains = await w.tx.instanceDomain.findMany({ where: { instanceId: a.instanceId } });
    if (!domains.some((d) => d.domain === a.domain)) throw errors.notFound("INST-d0nf", `the instance has no domain "${a.domain}"`);
    if (domains.length === 1) throw errors.failedPrecondition("INST-l4st", "an instance keeps at least one domain");
    const instance = await w.tx.instance.findUniqueOrThrow({ where: { id: a.instanceId }, select: { primaryDomain: true } });
    if (instance.primaryDomain === a.domain)
      throw errors.failedPrecondition("INST-pr1m", `"${a.domain}" is the instance's primary domain: set another one as primary first`);
    return [instanceDomainRemoved.event(ref(a.instanceId), { domain: a.domain })];
  });
}

/** One of the instance's domains becomes its primary one (nothing changes when it is already). */
export function setPrimaryInstanceDomain(es: EventStore, a: { instanceId: string; creator: string; domain: string }) {
  return changeInstance(es, a, async (w) => {
    const found = await w.tx.instanceDomain.findFirst({ where: { instanceId: a.instanceId, domain: a.domain } });
    if (!found) throw errors.notFound("INST-d0n2", `the instance has no domain "${a.domain}"`);
    const instance = await w.tx.instance.findUniqueOrThrow({ where: { id: a.instanceId }, select: { primaryDomain: true } });
    return instance.primaryDomain === a.domain ? [] : [instanceDomainPrimarySet.event(ref(a.instanceId), { domain: a.domain })];
  });
}

/** Its Hosts stop being served at once; its data is removed (its events stay: the log is not rewritten). */
export function removeInstance(es: EventStore, a: { instanceId: string; creator: string }) {
  return changeInstance(es, a, async () => [instanceRemoved.event(ref(a.instanceId))]);
}
