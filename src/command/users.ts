import { newPersonalAccessToken } from "../crypto/tokens.js";
import type { EventStore, NewEvent } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { EventTypes, type ContextType } from "./events.js";

/** Events that add a service (machine) user to an organisation. */
export function machineUserEvents(userId: string, orgId: string, username: string, displayName = username): NewEvent[] {
  return [{ aggregateType: "user", aggregateId: userId, type: EventTypes.machineAdded, payload: { username, displayName }, resourceOwner: orgId }];
}

/** Events that give a user a personal access token; the token itself is returned once and never stored. */
export function patEvents(userId: string, orgId: string, expiresAt: Date | null = null): { token: string; events: NewEvent[] } {
  const { token, hash } = newPersonalAccessToken();
  return {
    token,
    events: [
      {
        aggregateType: "user",
        aggregateId: userId,
        type: EventTypes.patAdded,
        payload: { tokenId: newId(), tokenHash: hash, expiresAt: expiresAt?.toISOString() ?? null },
        resourceOwner: orgId,
      },
    ],
  };
}

/** The event that makes a user a member of a context with roles (system membership: contextId ""). */
export function memberEvent(contextType: ContextType, contextId: string, userId: string, roles: string[]): NewEvent {
  const type = { system: EventTypes.systemMemberAdded, instance: EventTypes.instanceMemberAdded, org: EventTypes.orgMemberAdded }[contextType];
  return {
    aggregateType: contextType,
    aggregateId: contextType === "system" ? "system" : contextId,
    type,
    payload: { userId, roles },
    resourceOwner: contextId,
  };
}

/**
 * Adds a service user with a PAT and memberships in one transaction. The user API (a later issue) will
 * expose this; until then first start and test fixtures use it.
 */
export async function addServiceUser(
  es: EventStore,
  args: { instanceId: string; orgId: string; username: string; memberships: { type: ContextType; id: string; roles: string[] }[]; creator: string },
): Promise<{ userId: string; token: string }> {
  const userId = newId();
  const pat = patEvents(userId, args.orgId);
  await es.execute(async (w) => {
    await w.push(args.instanceId, args.creator, [
      ...machineUserEvents(userId, args.orgId, args.username),
      ...pat.events,
      ...args.memberships.filter((m) => m.type !== "system").map((m) => memberEvent(m.type, m.id, userId, m.roles)),
    ]);
    const system = args.memberships.filter((m) => m.type === "system");
    if (system.length) await w.push("", args.creator, system.map((m) => memberEvent("system", "", userId, m.roles)));
  });
  return { userId, token: pat.token };
}
