import { Code, ConnectError } from "@connectrpc/connect";
import type { SecretBox } from "../crypto/secrets.js";
import type { ImportError } from "../domain/data-org.js";
import type { Clock } from "../domain/clock.js";
import type { JobReport } from "../domain/jobs.js";
import { type ErrorLog, referenceOf, unexpectedFault } from "../errors/errors.js";
import { newId } from "../ids.js";
import type { Database } from "../storage/database.js";

/**
 * Exports and imports as jobs (proto svc.resources.portability.v3alpha): a row per job that the process running it
 * updates with its progress every few seconds, so that whoever started it can leave and read it again later, in any
 * process. A job is operational state, not history: no events; rows go after JOB_TTL_MS. A process that dies
 * leaves its job "running" with a change date that stops moving: readers take that as interrupted.
 */
export const JOB_TTL_MS = 24 * 3_600_000;
/** How often a running job writes its progress (and so shows it is alive). */
export const REPORT_EVERY_MS = 2_000;
/** A running job that has not reported for this long was interrupted (its process stopped). */
export const INTERRUPTED_AFTER_MS = 30_000;

export type JobKind = "export" | "import";

/** What a job's work returns: an export's data, an import's objects that could not be placed. */
export interface JobOutcome {
  data?: string;
  issues?: ImportError[];
}

export interface JobDeps {
  db: Database;
  box: SecretBox;
  clock: Clock;
  /** Where a fault of the server is logged (with a reference the job's error then names). */
  log: ErrorLog;
}

/** Starts a job: its row at once (returned), its work in the background. */
export async function startJob(
  deps: JobDeps,
  a: { instanceId: string; kind: JobKind; creator: string },
  work: (report: (r: JobReport) => void) => Promise<JobOutcome>,
) {
  const now = new Date(deps.clock.now());
  // the instance's jobs older than a day go when a new one starts (their data with them)
  await deps.db.prisma.portabilityJob.deleteMany({ where: { instanceId: a.instanceId, createdAt: { lt: new Date(now.getTime() - JOB_TTL_MS) } } });
  const job = await deps.db.prisma.portabilityJob.create({
    data: { id: newId(), instanceId: a.instanceId, kind: a.kind, state: "running", creator: a.creator, createdAt: now, changeDate: now },
  });
  void run(deps, job.id, work);
  return job;
}

async function run(deps: JobDeps, id: string, work: (report: (r: JobReport) => void) => Promise<JobOutcome>): Promise<void> {
  const progress = { done: 0, total: 0, phase: "", orgName: "", objects: 0 };
  const report = (r: JobReport) => {
    if (r.total !== undefined) progress.total = r.total;
    if (r.done !== undefined) progress.done = r.done;
    if (r.phase !== undefined) progress.phase = r.phase;
    if (r.orgName !== undefined) progress.orgName = r.orgName;
    if (r.objects) progress.objects += r.objects;
  };
  const write = (extra: object = {}) =>
    deps.db.prisma.portabilityJob.update({ where: { id }, data: { ...progress, ...extra, changeDate: new Date(deps.clock.now()) } });
  // every REPORT_EVERY_MS, changed or not: the change date moving is what says the job is alive
  let writing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    writing = writing.then(() => write()).catch(() => {});
  }, REPORT_EVERY_MS);
  timer.unref();
  try {
    const outcome = await work(report);
    clearInterval(timer);
    await writing;
    await write({
      state: "done",
      ...(outcome.data !== undefined ? { data: deps.box.seal(outcome.data), dataSize: Buffer.byteLength(outcome.data) } : {}),
      issues: (outcome.issues ?? []) as object[],
    });
  } catch (err) {
    clearInterval(timer);
    await writing;
    // the caller's mistake (bad data, a deadline) is said as the API would; a fault of the server by reference
    let error: string;
    if (err instanceof ConnectError && err.code !== Code.Internal) error = err.rawMessage;
    else {
      const fault = unexpectedFault(deps.log, err, { job: id });
      error = `internal error (reference ${referenceOf(fault)})`;
    }
    await write({ state: "failed", error }).catch(() => {});
  }
}
