import type { EventStore, NewEvent } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { EventTypes } from "./events.js";

export function orgAddedEvent(orgId: string, name: string, primaryDomain: string): NewEvent {
  return { aggregateType: "org", aggregateId: orgId, type: EventTypes.orgAdded, payload: { name, primaryDomain }, resourceOwner: orgId };
}

/** `<name slug>.<domain>`: an organisation's generated primary domain. */
export function orgDomain(name: string, domain: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "org";
  return `${slug}.${domain.toLowerCase()}`;
}

/** Adds an organisation to an instance. The organisation API (a later issue) will expose this. */
export async function addOrg(es: EventStore, args: { instanceId: string; name: string; domain: string; creator: string }): Promise<string> {
  const id = newId();
  await es.execute((w) => w.push(args.instanceId, args.creator, [orgAddedEvent(id, args.name, orgDomain(args.name, args.domain))]));
  return id;
}
