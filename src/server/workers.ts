/**
 * The supervisor of several server processes on one port (SVC_WORKERS >= 2). It serves no request: it owns the
 * embedded PostgreSQL (so the data directory's lock and its "in use by process <pid>" stay one process's), starts
 * the workers (node:cluster: they share the port, the supervisor hands each connection to one of them), replaces
 * one that dies, relays what each commit changed and the metrics between them, and drains them all on SIGTERM.
 * What must run once across workers is decided in the database, as across processes on one PostgreSQL
 * (subscriptions' leases, the set-up lock, `FOR UPDATE SKIP LOCKED`), never here.
 */
import cluster, { type Worker } from "node:cluster";
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { runningEmbeddedUrl } from "../command/recover.js";
import type { Config } from "../config/config.js";
import { StartupError } from "../config/startup-error.js";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../storage/embedded.js";
import { isFirstEmbeddedStart } from "./logging.js";
import { mergeMetricTexts, supervisorMetrics } from "./worker-metrics.js";
import { WORKER_ENV, type WorkerMessage, type WorkerRole } from "./worker-peers.js";

/** Unplanned exits within CRASH_WINDOW_MS after which the supervisor gives up (its own supervisor restarts the whole). */
const CRASH_LIMIT = 5;
const CRASH_WINDOW_MS = 60_000;
/** The most a worker's metrics may take at a scrape: one that does not answer is left out, not waited for. */
const COLLECT_MS = 2_000;

export interface Supervised {
  url: string;
  /** The start created the first instance; where the first admin's generated password is, if any. */
  firstInstance?: { passwordFile?: string | undefined };
  /** Finishes the calls in flight in every worker, then stops the database; resolves with the exit code. */
  stop(): Promise<number>;
}

interface Slot {
  worker: Worker;
  ready: boolean;
}

/**
 * Starts `config.workers` workers and resolves when all listen; rejects with the first one's failure.
 * `onStoppable` gets the stop at once, before any worker is forked: the first worker answers on the port before
 * the last is ready, so a SIGTERM can come while starting (and a container's PID 1 ignores one it has no
 * handler for).
 */
export async function superviseWorkers(
  config: Config,
  log: Logger,
  exit: (code: number) => void,
  onStoppable: (stop: () => Promise<number>) => void,
): Promise<Supervised> {
  const n = config.workers;
  let embedded: Promise<EmbeddedPostgres> | undefined;
  let stopping = false;
  const slots: (Slot | undefined)[] = Array.from({ length: n }, () => undefined);
  let stopped: Promise<number> | undefined;
  const stopAll = (code: number): Promise<number> => (stopped ??= drainAll(code));
  const drainAll = async (code: number): Promise<number> => {
    stopping = true;
    const live = slots.filter((s): s is Slot => s !== undefined && !s.worker.isDead());
    // A worker still starting may not listen for messages yet (one sent then is lost): a signal reaches it either
    // way, ending it (nothing answered yet) or, once its handler is in place, draining it.
    for (const s of live) {
      if (s.ready) sendToWorker(s.worker, { t: "drain" });
      else s.worker.process.kill("SIGTERM");
    }
    // the grace for calls in flight, then time to close the rest (subscriptions, pools) on a loaded machine
    const deadline = config.shutdownGraceMs + 20_000;
    const exited = await Promise.race([
      Promise.all(live.map((s) => (s.worker.isDead() ? undefined : new Promise((r) => s.worker.once("exit", r))))).then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), deadline).unref()),
    ]);
    for (const s of live) if (!s.worker.isDead()) s.worker.process.kill("SIGKILL");
    // one still starting is waited for: stopped now, not left running without its owner
    await embedded?.then((e) => e.stop()).catch(() => undefined);
    return exited ? code : 1;
  };
  onStoppable(() => stopAll(0));

  if (!config.databaseUrl) {
    if (isFirstEmbeddedStart(config)) log.info({ dataDir: config.dataDir }, "preparing the database ...");
    embedded = startEmbeddedPostgres(config.dataDir, {
      onLost: (reason) => {
        // the workers would only fail each call: stop them and exit, as one process does (docs/decisions.md)
        log.error({ reason }, reason);
        for (const s of slots) s?.worker.process.kill("SIGKILL");
        exit(1);
      },
    });
    await embedded;
  }
  const role = (slot: number): WorkerRole => ({
    slot,
    startTag,
    embeddedUrl: embedded ? runningEmbeddedUrl(config.dataDir) : undefined,
    poolSize: Math.max(4, Math.ceil(config.databasePoolSize / n)),
  });
  const startTag = randomUUID();
  const relay = new ChangeRelay(slots);
  const restarts = { total: 0, recent: [] as number[] };

  let started: { resolve: (s: Supervised) => void; reject: (e: Error) => void };
  const all = new Promise<Supervised>((resolve, reject) => (started = { resolve, reject }));
  let url = "";
  let firstInstance: Supervised["firstInstance"];
  let failed = false;
  /** Every worker of the start has been ready once: from then on an exit is a crash to replace. */
  let up = false;

  const fork = (slot: number) => {
    const worker = cluster.fork({ [WORKER_ENV]: JSON.stringify(role(slot)) });
    const s: Slot = { worker, ready: false };
    slots[slot] = s;
    // Its channel's errors (a write to a worker that is going away): never the supervisor's end.
    worker.on("error", (err) => log.debug({ worker: slot, reason: err.message }, "worker channel error"));
    worker.on("message", (m: WorkerMessage) => {
      if (m.t === "ready") {
        s.ready = true;
        if (stopping) return sendToWorker(worker, { t: "drain" });
        url = m.url;
        firstInstance ??= m.firstInstance;
        if (!up && slots.every((x) => x?.ready)) {
          up = true;
          started.resolve({ url, firstInstance, stop: () => stopAll(0) });
        }
      } else if (m.t === "failed") {
        // a replacement's failure is the operator's to read; its exit is counted as a crash
        if (up) log.error({ worker: slot }, m.line);
        else if (!failed) {
          failed = true;
          started.reject(new StartupError(m.line.replace(/^cannot start: /, "")));
        }
      } else if (m.t === "changed") relay.changed(slot, m);
      else if (m.t === "applied") relay.applied(m, slot);
      else if (m.t === "metrics") void machineMetrics().then((text) => sendToWorker(worker, { t: "metrics", id: m.id, text }));
      else if (m.t === "collect") collected.get(m.id)?.(slot, m.text ?? "");
    });
    worker.on("exit", (code, signal) => {
      relay.gone(slot);
      if (stopping || slots[slot]?.worker !== worker) return;
      // Before all first came up, an exit fails the start; after, any unplanned exit counts, a replacement that
      // dies while starting too (it would otherwise leave its slot empty for good).
      if (!up) {
        if (!failed) {
          failed = true;
          started.reject(new StartupError(`a worker exited while starting (${signal ?? `exit code ${code}`})`));
        }
        return;
      }
      const now = Date.now();
      restarts.recent = [...restarts.recent.filter((t) => now - t < CRASH_WINDOW_MS), now];
      log.error({ worker: slot, code, signal }, `worker ${slot} exited (${signal ?? `exit code ${code}`}): starting another`);
      if (restarts.recent.length > CRASH_LIMIT) {
        log.error({ exits: restarts.recent.length }, `${restarts.recent.length} workers exited within a minute: stopping`);
        void stopAll(1).then(exit);
        return;
      }
      restarts.total++;
      // the slot's earlier restarts within the window wait longer: 0 s, 1 s, 2 s, 4 s ... 30 s
      const backoff = Math.min(30_000, restarts.recent.length > 1 ? 1000 * 2 ** (restarts.recent.length - 2) : 0);
      setTimeout(() => !stopping && fork(slot), backoff);
    });
  };

  // The machine's metrics: each worker's text (labelled by its slot), merged per family, and the supervisor's.
  const collected = new Map<number, (slot: number, text: string) => void>();
  let collectId = 0;
  const machineMetrics = async (): Promise<string> => {
    const id = ++collectId;
    const live = slots.filter((s): s is Slot => s?.ready === true && !s.worker.isDead());
    const texts = await new Promise<string[]>((resolve) => {
      const got: string[] = [];
      const done = () => {
        collected.delete(id);
        clearTimeout(timer);
        resolve(got);
      };
      const timer = setTimeout(done, COLLECT_MS);
      collected.set(id, (_slot, text) => {
        got.push(text);
        if (got.length === live.length) done();
      });
      for (const s of live) sendToWorker(s.worker, { t: "collect", id });
    });
    const running = slots.filter((s) => s?.ready && !s.worker.isDead()).length;
    return mergeMetricTexts([...texts, supervisorMetrics({ workers: n, running, restarts: restarts.total, missing: live.length - texts.length })]);
  };

  try {
    for (let slot = 0; slot < n && !stopping; slot++) fork(slot);
    return await all;
  } catch (err) {
    await stopAll(1);
    throw err;
  }
}

/**
 * A message to a worker that may be dying: its channel can still count as connected when the write fails (EPIPE),
 * and an unhandled send error would end the supervisor. The failure is dropped; the worker's exit is handled
 * where exits are.
 */
export function sendToWorker(worker: Worker, m: WorkerMessage): void {
  if (worker.isConnected()) worker.send(m, undefined, undefined, () => {});
}

/**
 * What each commit changed, from the worker that committed to all the others; the committing worker hears
 * "applied" when every other worker has dropped its cached entries (or died meanwhile).
 */
class ChangeRelay {
  /** `${from}/${id}` → the workers that still have to apply it */
  private readonly pending = new Map<string, Set<number>>();

  constructor(private readonly slots: readonly (Slot | undefined)[]) {}

  changed(from: number, m: Extract<WorkerMessage, { t: "changed" }>): void {
    const others = new Set<number>();
    this.slots.forEach((s, slot) => {
      if (slot !== from && s?.worker.isConnected()) {
        others.add(slot);
        sendToWorker(s.worker, { t: "changed", id: m.id, notice: m.notice, from });
      }
    });
    if (others.size) this.pending.set(`${from}/${m.id}`, others);
    else this.done(from, m.id);
  }

  /** Worker `by` has applied the change `m.id` of worker `m.from`. */
  applied(m: Extract<WorkerMessage, { t: "applied" }>, by: number): void {
    if (m.from === undefined) return;
    const key = `${m.from}/${m.id}`;
    const left = this.pending.get(key);
    if (!left) return;
    left.delete(by);
    if (!left.size) {
      this.pending.delete(key);
      this.done(m.from, m.id);
    }
  }

  /** A worker died: nothing more is waited for from it. */
  gone(slot: number): void {
    for (const [key, left] of this.pending) {
      if (left.delete(slot) && !left.size) {
        this.pending.delete(key);
        const [from, id] = key.split("/").map(Number) as [number, number];
        this.done(from, id);
      }
    }
  }

  private done(from: number, id: number): void {
    const s = this.slots[from];
    if (s) sendToWorker(s.worker, { t: "applied", id });
  }
}
