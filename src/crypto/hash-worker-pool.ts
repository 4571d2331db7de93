import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

/** One bcrypt or argon2 verification, as sent to a worker thread. */
export interface WasmVerification {
  algorithm: "bcrypt" | "argon2";
  password: string;
  hash: string;
}
/** What the worker answers: the result, or why the hash could not be verified (malformed). */
type WasmVerificationReply = { valid: boolean } | { error: string };

/**
 * The threads of one process: two at most, and no more than its share of the cores when `processes` (SVC_WORKERS)
 * share them. A thread beyond its cores would only take CPU from the event loops and the libuv threads (scrypt,
 * pbkdf2, DNS), and bounded costs keep a queued verification waiting at most a second or so per job ahead of it.
 * Imported bcrypt/argon2 hashes are rehashed to scrypt at the first successful login, so this path carries
 * little traffic.
 */
export function hashThreadsFor(cores: number, processes: number): number {
  return Math.max(1, Math.min(2, Math.floor(cores / processes)));
}

/**
 * The worker's code, given to it as a string (`eval`) rather than as a file. From source the file would be `.ts`,
 * and Node 20 does not apply tsx's loader hooks to a worker's entry (`--import tsx` in the worker's execArgv still
 * fails with "Unknown file extension .ts"); vitest, which transforms modules itself, starts workers as plain Node
 * too. A `.js` file beside this one would not be emitted to `dist/` by tsc (no allowJs). The string runs the
 * same under `node --import tsx`, vitest and compiled JS. It loads hash-wasm's CommonJS build by the path
 * resolved here, so the working directory does not matter. One verification at a time; the pool queues the rest.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { argon2Verify, bcryptVerify } = require(workerData.hashWasm);
parentPort.on("message", async (job) => {
  let reply;
  try {
    const args = { password: job.password, hash: job.hash };
    reply = { valid: job.algorithm === "bcrypt" ? await bcryptVerify(args) : await argon2Verify(args) };
  } catch (err) {
    reply = { error: err instanceof Error ? err.message : String(err) };
  }
  parentPort.postMessage(reply);
});
`;
const hashWasm = createRequire(import.meta.url).resolve("hash-wasm");

interface Job {
  verification: WasmVerification;
  resolve(valid: boolean): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  /** Taken out of the pool by `close` while busy: ends after its job instead of taking another. */
  retiring?: () => void;
}

/** Worker threads started when first needed; jobs beyond the threads wait in order. */
class HashWorkerPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];

  constructor(private size: number) {}

  /** Fewer threads take effect as busy ones finish (idle ones end now); more, as jobs come. */
  resize(size: number): void {
    this.size = size;
    for (const slot of [...this.slots].slice(size)) {
      this.slots.delete(slot);
      if (slot.job) slot.retiring = () => void slot.worker.terminate();
      else void slot.worker.terminate();
    }
    this.dispatch();
  }

  /** The threads it may use, and those running now. */
  get threads(): { size: number; running: number } {
    return { size: this.size, running: this.slots.size };
  }

  verify(verification: WasmVerification): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ verification, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Ends the threads (server shutdown): idle ones now, busy ones after their job (bounded, about a second).
   * Jobs that come later start new threads, so servers sharing a process (tests) do not break each other.
   */
  async close(): Promise<void> {
    const slots = [...this.slots];
    this.slots.clear();
    await Promise.all(
      slots.map((slot) =>
        slot.job
          ? new Promise<void>((done) => {
              slot.retiring = () => void slot.worker.terminate().then(() => done(), done);
            })
          : slot.worker.terminate().then(() => undefined),
      ),
    );
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = [...this.slots].find((s) => !s.job) ?? (this.slots.size < this.size ? this.start() : undefined);
      if (!slot) return;
      const job = this.queue.shift()!;
      slot.job = job;
      // A busy thread keeps the process alive until it answers; an idle one never does.
      slot.worker.ref();
      slot.worker.postMessage(job.verification);
    }
  }

  private start(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { hashWasm } });
    const slot: Slot = { worker };
    worker.unref();
    worker.on("message", (reply: WasmVerificationReply) => {
      const job = slot.job;
      slot.job = undefined;
      worker.unref();
      if ("error" in reply) job?.reject(new Error(reply.error));
      else job?.resolve(reply.valid);
      if (slot.retiring) slot.retiring();
      else this.dispatch();
    });
    const fail = (err: Error) => {
      this.slots.delete(slot);
      slot.job?.reject(err);
      slot.job = undefined;
      slot.retiring?.();
      this.dispatch();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`password hash worker exited (${code})`)));
    this.slots.add(slot);
    return slot;
  }
}

const pool = new HashWorkerPool(hashThreadsFor(availableParallelism(), 1));

/** Sizes the threads for this process's share of `cores` (at a server's start: SVC_WORKERS and the usable cores). */
export const sizeHashWorkers = (cores: number, processes: number): void => pool.resize(hashThreadsFor(cores, processes));

/** How many threads verifications may use, and how many run. */
export const hashWorkerThreads = (): { size: number; running: number } => pool.threads;

/** Verifies a bcrypt or argon2 hash on a worker thread; rejects when the hash is malformed or the thread fails. */
export const verifyOnWorker = (verification: WasmVerification): Promise<boolean> => pool.verify(verification);

/** Ends the worker threads, so that a closed server leaves nothing running; later verifications start new ones. */
export const closeHashWorkers = (): Promise<void> => pool.close();
