import type { EventStore, StoredEvent, Subscription } from "../eventstore/eventstore.js";
import type { ActionQueries } from "../query/actions.js";
import type { Logger, TargetCaller } from "./caller.js";
import { eventExecutionIds } from "./conditions.js";

/** Payload keys never sent to a target: hashes, keys and secrets stay in the server. */
const SECRET_KEY = /hash|secret|signingkey|password|token$/i;

function redact(payload: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(payload).filter(([k]) => !SECRET_KEY.test(k)));
}

export function eventPayload(e: StoredEvent) {
  return {
    instanceID: e.instanceId,
    type: e.type,
    aggregate: { type: e.aggregateType, id: e.aggregateId, resourceOwner: e.resourceOwner },
    sequence: e.sequence,
    position: e.position.toString(),
    created_at: e.createdAt.toISOString(),
    creator: e.creator,
    payload: redact(e.payload),
  };
}

// With the subscription's backoff (0.2 s doubling, at most 30 s) this is about four minutes of retries.
const MAX_ATTEMPTS = 12;

/**
 * Event executions: a durable subscriber of the event log calls the targets of the most specific execution
 * of each event (type, group, all). At least once: a failed call makes the batch run again after a backoff,
 * and the subscription's position survives restarts. It never runs in the API call's path. An event whose
 * targets keep failing is given up after MAX_ATTEMPTS and logged, so that one dead target cannot stop the rest.
 */
export function startEventExecutions(es: EventStore, actions: ActionQueries, caller: TargetCaller, log: Logger): Subscription {
  const attempts = new Map<bigint, number>();
  // Delivered in this process: a batch retried after a later event failed skips them.
  const delivered = new Set<bigint>();
  return es.subscribe(
    "event-executions",
    async (events) => {
      for (const e of events) {
        if (delivered.has(e.position)) continue;
        const targets = await actions.targetsFor(e.instanceId, eventExecutionIds(e.type));
        if (targets.length) {
          try {
            await caller.runChain(targets, eventPayload(e), { failOnAnyError: true });
          } catch (err) {
            const n = (attempts.get(e.position) ?? 0) + 1;
            attempts.set(e.position, n);
            if (n < MAX_ATTEMPTS) throw err;
            log.warn({ event: e.type, position: e.position.toString(), reason: (err as Error).message }, "event execution given up");
          }
        }
        attempts.delete(e.position);
        delivered.add(e.position);
      }
      // Positions below the batch's end are stored: they will never come again in this process.
      delivered.clear();
    },
    { batchSize: 20, onError: () => {} },
  );
}
