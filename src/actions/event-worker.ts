import { forgetDelivery, scheduleDeliveryRetry } from "../command/event-deliveries.js";
import type { EventStore, StoredEvent } from "../eventstore/eventstore.js";
import { dueDeliveries } from "../query/event-deliveries.js";
import type { ActionQueries } from "../query/actions.js";
import type { Database } from "../storage/database.js";
import type { Logger, TargetCaller } from "./caller.js";
import { eventExecutionIds } from "../domain/conditions.js";
import { redactPayload } from "../domain/redaction.js";

export function eventPayload(e: StoredEvent) {
  return {
    instanceID: e.instanceId,
    type: e.type,
    aggregate: { type: e.aggregateType, id: e.aggregateId, resourceOwner: e.resourceOwner },
    sequence: e.sequence,
    position: e.position.toString(),
    created_at: e.createdAt.toISOString(),
    creator: e.creator,
    // Hashes, keys and secrets stay in the server.
    payload: redactPayload(e.payload),
  };
}

/** Retry schedule of a failed delivery: 0.2 s doubling up to 5 min; given up after about an hour. */
export const retryPolicy = { firstDelayMs: 200, maxDelayMs: 5 * 60_000, maxAttempts: 24 };

export function nextDelayMs(attempts: number): number {
  return Math.min(retryPolicy.firstDelayMs * 2 ** (attempts - 1), retryPolicy.maxDelayMs);
}

export interface EventExecutions {
  stop(): Promise<void>;
}

/**
 * Event executions. A durable subscriber of the event log calls the targets of each event's most specific
 * execution (type, group, all), never in the API call's path. A delivery that fails is written to
 * `event_deliveries` and retried there with backoff, so one dead target holds up neither the log nor the
 * other targets, and pending retries survive restarts. One process at a time delivers, the one holding the
 * subscription's lease (several processes share a database). At least once: a crash between a call and the
 * bookkeeping repeats the call, as does a takeover from a process that froze past its lease.
 */
export function startEventExecutions(
  db: Database,
  es: EventStore,
  actions: ActionQueries,
  caller: TargetCaller,
  log: Logger,
  opts: { retryPollMs?: number } = {},
): EventExecutions {
  const deliver = async (e: StoredEvent) => {
    const targets = await actions.targetsFor(e.instanceId, eventExecutionIds(e.type));
    if (targets.length) await caller.runChain(targets, eventPayload(e), { failOnAnyError: true });
  };
  const failed = async (position: bigint, attempts: number, err: unknown) => {
    const lastError = (err as Error).message ?? String(err);
    if (attempts >= retryPolicy.maxAttempts) {
      log.warn({ position: position.toString(), attempts, reason: lastError }, "event execution given up");
      await forgetDelivery(db, position);
      return;
    }
    await scheduleDeliveryRetry(db, { position, attempts, nextAttemptAt: new Date(Date.now() + nextDelayMs(attempts)), lastError });
  };

  const subscription = es.subscribe(
    "event-executions",
    async (events, done) => {
      for (const e of events) {
        try {
          await deliver(e);
        } catch (err) {
          await failed(e.position, 1, err);
        }
        // Called, or its retry booked: a batch that fails after this (the database went away) resumes after it.
        done(e);
      }
    },
    { batchSize: 50, onError: (err) => log.warn({ reason: (err as Error).message }, "event executions: reading the log failed") },
  );

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const retryDue = async () => {
    // Retries are the subscription's work too: only the process holding it makes them (one delivery at a time).
    if (!subscription.holding()) return;
    const due = await dueDeliveries(db, 20);
    for (const d of due) {
      // the lease may pass to another process meanwhile: it retries from there
      if (stopped || !subscription.holding()) return;
      const event = await es.eventAt(d.position);
      try {
        if (event) await deliver(event);
        await forgetDelivery(db, d.position);
      } catch (err) {
        await failed(d.position, d.attempts + 1, err);
      }
    }
  };
  const tick = () => {
    if (stopped) return;
    running = retryDue()
      .catch((err) => log.warn({ reason: (err as Error).message }, "event executions: retry pass failed"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, opts.retryPollMs ?? 200);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await subscription.stop();
    },
  };
}
