import { randomBytes } from "node:crypto";
import type { SecretBox } from "../crypto/secrets.js";
import type { ProviderConfig, ProviderFields, ProviderKind, ProviderType } from "../domain/notification-providers.js";
import { errors } from "../errors/errors.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { changeAggregate, type ChangeDetails } from "./aggregate.js";
import {
  notificationProviderActivated,
  notificationProviderAdded,
  notificationProviderChanged,
  notificationProviderDeactivated,
  notificationProviderRemoved,
} from "../events/index.js";

const AGGREGATE = "notification_provider";

/** The secret of a new provider: the given password or token, or for an HTTP SMS provider a new signing key (returned once). */
export async function createNotificationProvider(
  es: EventStore,
  box: SecretBox,
  args: { instanceId: string; creator: string; kind: ProviderKind; providerType: ProviderType; description: string; config: ProviderConfig; secret: string },
) {
  const id = newId();
  const signingKey = args.providerType === "http" ? randomBytes(32).toString("base64url") : "";
  const secret = signingKey || args.secret;
  const payload: ProviderFields = {
    kind: args.kind,
    providerType: args.providerType,
    description: args.description,
    config: args.config,
    secret: secret ? box.seal(secret) : "",
  };
  const { result } = await es.execute(async (w): Promise<ChangeDetails> => {
    const [e] = await w.push(args.instanceId, args.creator, [notificationProviderAdded.event({ aggregateId: id, resourceOwner: args.instanceId }, payload)]);
    return { id, sequence: e!.sequence, changeDate: e!.createdAt, instanceId: args.instanceId, resourceOwner: args.instanceId };
  });
  return { details: result, signingKey };
}

function existing(args: { instanceId: string; creator: string; id: string; kind: ProviderKind }) {
  return {
    aggregateType: AGGREGATE,
    instanceId: args.instanceId,
    id: args.id,
    creator: args.creator,
    load: async (w: Parameters<Parameters<EventStore["execute"]>[0]>[0]) => {
      const row = await w.tx.notificationProvider.findFirst({ where: { id: args.id, instanceId: args.instanceId, kind: args.kind } });
      return row;
    },
    notFound: () => errors.notFound("NOTIF-n0tf", `${args.kind} provider "${args.id}" not found`),
    ownerOf: () => args.instanceId,
  } as const;
}

/**
 * Only what differs is stored. `config` is merged into the stored one; a changed provider type replaces it.
 * `secret`: undefined keeps the stored one, a string replaces it ("" removes it). A provider whose type changes
 * gets a secret of the new type, never the old one's: an HTTP SMS provider a new signing key (returned once, like
 * at its creation), a Twilio one the token the patch must then carry.
 */
export async function patchNotificationProvider(
  es: EventStore,
  box: SecretBox,
  args: {
    instanceId: string;
    creator: string;
    id: string;
    kind: ProviderKind;
    description?: string;
    providerType?: ProviderType;
    config?: Partial<ProviderConfig>;
    secret?: string;
  },
) {
  let signingKey = "";
  const details = await changeAggregate(es, {
    ...existing(args),
    decide: (row) => {
      // decide may run again (a retried transaction): only the key of the run that commits is returned
      signingKey = "";
      const changed: Partial<Omit<ProviderFields, "kind">> = {};
      if (args.description !== undefined && args.description !== row.description) changed.description = args.description;
      const typeChanged = args.providerType !== undefined && args.providerType !== row.providerType;
      if (typeChanged) changed.providerType = args.providerType;
      if (args.config) {
        const base = typeChanged ? {} : (row.config as object);
        const config = { ...base, ...Object.fromEntries(Object.entries(args.config).filter(([, v]) => v !== undefined)) } as unknown as ProviderConfig;
        if (JSON.stringify(config) !== JSON.stringify(row.config)) changed.config = config;
      }
      let secret = args.secret;
      if (typeChanged && args.providerType === "http") {
        signingKey = randomBytes(32).toString("base64url");
        secret = signingKey;
      } else if (typeChanged && args.providerType === "twilio" && !secret) {
        throw errors.invalidArgument("NOTIF-tw1t", "provider.twilio.token: required when the provider becomes a Twilio one (its former secret is not kept)");
      }
      if (secret !== undefined) {
        const current = row.secret ? box.open(row.secret) : "";
        if (secret !== current) changed.secret = secret ? box.seal(secret) : "";
      }
      return Object.keys(changed).length ? [notificationProviderChanged.change(changed)] : [];
    },
  });
  return { details, signingKey };
}

/** At most one active provider per kind: activating one deactivates the one active before (both in one transaction). */
export async function activateNotificationProvider(es: EventStore, args: { instanceId: string; creator: string; id: string; kind: ProviderKind }) {
  const { result } = await es.execute(async (w): Promise<ChangeDetails> => {
    // Serialises activations of one kind in an instance.
    await w.lock(args.instanceId, AGGREGATE, `active/${args.kind}`);
    await w.lock(args.instanceId, AGGREGATE, args.id);
    const row = await w.tx.notificationProvider.findFirst({ where: { id: args.id, instanceId: args.instanceId, kind: args.kind } });
    if (!row) throw errors.notFound("NOTIF-n0t2", `${args.kind} provider "${args.id}" not found`);
    if (row.active) return { id: row.id, sequence: row.sequence, changeDate: row.changeDate, instanceId: args.instanceId, resourceOwner: args.instanceId };
    const others = await w.tx.notificationProvider.findMany({ where: { instanceId: args.instanceId, kind: args.kind, active: true }, select: { id: true } });
    for (const o of others) await w.lock(args.instanceId, AGGREGATE, o.id);
    const stored = await w.push(args.instanceId, args.creator, [
      ...others.map((o) => notificationProviderDeactivated.event({ aggregateId: o.id, resourceOwner: args.instanceId })),
      notificationProviderActivated.event({ aggregateId: row.id, resourceOwner: args.instanceId }),
    ]);
    const e = stored[stored.length - 1]!;
    return { id: row.id, sequence: e.sequence, changeDate: e.createdAt, instanceId: args.instanceId, resourceOwner: args.instanceId };
  });
  return result;
}

export async function deactivateNotificationProvider(es: EventStore, args: { instanceId: string; creator: string; id: string; kind: ProviderKind }) {
  return changeAggregate(es, {
    ...existing(args),
    decide: (row) => (row.active ? [notificationProviderDeactivated.change()] : []),
  });
}

export async function deleteNotificationProvider(es: EventStore, args: { instanceId: string; creator: string; id: string; kind: ProviderKind }) {
  return changeAggregate(es, { ...existing(args), decide: () => [notificationProviderRemoved.change()] });
}
