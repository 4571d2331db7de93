/**
 * A worker's side of several server processes on one port (SVC_WORKERS >= 2; the supervisor is `workers.ts`).
 * Everything a worker says to the others goes through the supervisor over the cluster's IPC channel: what a
 * commit changed (so that no worker serves a cached entry the caller has just changed through another) and the
 * machine's metrics.
 */
import cluster from "node:cluster";

/** Messages between the supervisor and its workers (IPC, structured clone). */
export type WorkerMessage =
  /** worker → supervisor: listening; `firstInstance` when this worker's start created the first instance */
  | { t: "ready"; url: string; firstInstance?: { passwordFile?: string | undefined } }
  /** worker → supervisor: could not start (the one line an operator sees) */
  | { t: "failed"; line: string }
  /** worker → supervisor → the other workers: what a commit changed (`changeNotice`) */
  | { t: "changed"; id: number; notice: string; from?: number }
  /** worker → supervisor → origin: the other workers have applied change `id` */
  | { t: "applied"; id: number; from?: number }
  /** worker → supervisor: the machine's metrics, please; supervisor → worker: here they are (`text`) */
  | { t: "metrics"; id: number; text?: string }
  /** supervisor → worker: your metrics text, please; worker → supervisor: `text` */
  | { t: "collect"; id: number; text?: string }
  /** supervisor → worker: finish the calls in flight and exit */
  | { t: "drain" };

/** What the supervisor tells each worker at its start (the environment variable SVC_WORKER, JSON). */
export interface WorkerRole {
  /** 0..N-1, kept by a replacement: the `worker` label of its metrics and log lines */
  slot: number;
  /** The same for every worker of one start (`Database.startTag`). */
  startTag: string;
  /** The supervisor's embedded PostgreSQL (through its socket); absent with DATABASE_URL. */
  embeddedUrl?: string | undefined;
  /** This worker's share of SVC_DATABASE_POOL_SIZE. */
  poolSize: number;
}

export const WORKER_ENV = "SVC_WORKER";

/** This process's role when the supervisor started it, else undefined (a single process). */
export function workerRole(): WorkerRole | undefined {
  if (!cluster.isWorker) return undefined;
  const raw = process.env[WORKER_ENV];
  return raw ? (JSON.parse(raw) as WorkerRole) : undefined;
}

/**
 * How long a write waits for the other workers to drop what it changed. They are a pipe away (a fraction of a
 * millisecond), but a worker busy with other calls answers when its event loop comes round: on a loaded machine
 * 50 ms let a write answer before another worker had dropped its copy, and a read there saw the value before (a
 * rehearsal of the suite). Only a worker that cannot answer at all (being replaced) costs a write the whole wait.
 */
const RELAY_WAIT_MS = 1_000;

/** A worker's link to the other workers of its machine (through the supervisor). */
export class WorkerPeers {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: string) => void; timer: NodeJS.Timeout }>();
  private changedBy: ((notice: string) => void) | undefined;
  private ownMetrics: (() => Promise<string>) | undefined;

  constructor(readonly role: WorkerRole) {
    process.on("message", (m: WorkerMessage) => this.receive(m));
  }

  /** Tells the other workers what a commit changed; resolves once they have applied it (or after RELAY_WAIT_MS). */
  changed(notice: string): Promise<void> {
    return this.ask({ t: "changed", id: this.nextId++, notice }, RELAY_WAIT_MS).then(() => {});
  }

  /** What another worker committed: its notice, as a NOTIFY would carry it. */
  onChanged(fn: (notice: string) => void): void {
    this.changedBy = fn;
  }

  /** Renders this worker's metrics when the supervisor collects the machine's. */
  serveMetrics(own: () => Promise<string>): void {
    this.ownMetrics = own;
  }

  /** The machine's metrics: every worker's, each series labelled with its worker, and the supervisor's. */
  async machineMetrics(): Promise<string> {
    return this.ask({ t: "metrics", id: this.nextId++ }, 5_000);
  }

  /** Sends `m` and resolves with the reply's text, or "" when none came within `ms` (a worker being replaced). */
  private ask(m: Extract<WorkerMessage, { id: number }>, ms: number): Promise<string> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(m.id);
        resolve("");
      }, ms);
      this.waiting.set(m.id, { resolve, timer });
      process.send?.(m);
    });
  }

  private answer(id: number, text: string): void {
    const w = this.waiting.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    this.waiting.delete(id);
    w.resolve(text);
  }

  private receive(m: WorkerMessage): void {
    if (m.t === "changed") {
      this.changedBy?.(m.notice);
      process.send?.({ t: "applied", id: m.id, from: m.from } satisfies WorkerMessage);
    } else if (m.t === "applied") this.answer(m.id, "");
    else if (m.t === "metrics") this.answer(m.id, m.text ?? "");
    else if (m.t === "collect") {
      const own = this.ownMetrics?.() ?? Promise.resolve("");
      void own.then(
        (text) => process.send?.({ t: "collect", id: m.id, text } satisfies WorkerMessage),
        () => process.send?.({ t: "collect", id: m.id, text: "" } satisfies WorkerMessage),
      );
    }
  }
}
