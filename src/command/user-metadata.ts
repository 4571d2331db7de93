import type { EventStore } from "../eventstore/eventstore.js";
import { errors } from "../errors/errors.js";
import type { ChangeDetails } from "./aggregate.js";
import { userMetadataRemoved, userMetadataSet } from "../events/index.js";
import { changeUser } from "./user-aggregate.js";

/**
 * Users' metadata: key -> bytes (ZITADEL's user metadata), on humans and machines. Keys of 1-200
 * characters; values up to 64 KiB; at most 100 entries a user, so that a token's metadata claim stays small.
 */
export const METADATA_MAX_VALUE = 64 * 1024;
export const METADATA_MAX_ENTRIES = 100;
const KEY = /^[A-Za-z0-9._:/-]{1,200}$/;

export interface MetadataEntry {
  key: string;
  value: Uint8Array;
}

/** Checks entries as a request gives them: `field` names the list (e.g. `metadata`). */
export function checkMetadata(entries: MetadataEntry[], field: string): void {
  if (!entries.length) throw errors.invalidArgument("META-n0ne", `invalid ${field}: give at least one entry`);
  entries.forEach((e, i) => {
    if (!KEY.test(e.key)) throw errors.invalidArgument("META-k3y0", `invalid ${field}[${i}].key: 1-200 letters, digits or . _ : / -`);
    if (e.value.length > METADATA_MAX_VALUE)
      throw errors.invalidArgument("META-v4lu", `invalid ${field}[${i}].value: at most ${METADATA_MAX_VALUE / 1024} KiB`);
  });
}

/** Sets entries (each added or replaced); an entry whose value is unchanged gets no event. */
export function setUserMetadata(es: EventStore, a: { instanceId: string; userId: string; creator: string; entries: MetadataEntry[] }): Promise<ChangeDetails> {
  checkMetadata(a.entries, "metadata");
  return changeUser(es, { instanceId: a.instanceId, id: a.userId, creator: a.creator }, async (_u, w) => {
    const current = await w.tx.userMetadata.findMany({ where: { userId: a.userId } });
    const fresh = a.entries.filter((e) => !current.some((c) => c.key === e.key && Buffer.from(c.value).equals(Buffer.from(e.value))));
    const keys = new Set([...current.map((c) => c.key), ...a.entries.map((e) => e.key)]);
    if (keys.size > METADATA_MAX_ENTRIES) throw errors.failedPrecondition("META-m4ny", `a user may have at most ${METADATA_MAX_ENTRIES} metadata entries`);
    return fresh.map((e) => userMetadataSet.change({ key: e.key, value: Buffer.from(e.value).toString("base64") }));
  });
}

export function removeUserMetadata(es: EventStore, a: { instanceId: string; userId: string; creator: string; key: string }): Promise<ChangeDetails> {
  return changeUser(es, { instanceId: a.instanceId, id: a.userId, creator: a.creator }, async (_u, w) => {
    const there = await w.tx.userMetadata.findUnique({ where: { userId_key: { userId: a.userId, key: a.key } } });
    if (!there) throw errors.notFound("META-n0tf", `user "${a.userId}" has no metadata "${a.key.slice(0, 200)}"`);
    return [userMetadataRemoved.change({ key: a.key })];
  });
}
