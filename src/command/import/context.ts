import type { IdpKind } from "../../domain/idps.js";
import { type Code, ConnectError } from "@connectrpc/connect";
import type { SecretBox } from "../../crypto/secrets.js";
import type { ReportProgress } from "../../domain/jobs.js";
import { TimedOut, type DataOrg, type ImportError, type ImportSuccessOrg } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SettingsQueries } from "../../query/settings.js";
import type { Database } from "../../storage/database.js";

export interface ImportDeps {
  es: EventStore;
  db: Database;
  box: SecretBox;
  settings: SettingsQueries;
  /**
   * An exported provider's configuration (proto JSON of its kind's) checked as a create checks it, without the
   * secret (which does not travel); INVALID_ARGUMENT naming `field` otherwise. The API's (api/idp/kinds.ts).
   */
  idpConfig: (kind: IdpKind, json: Record<string, unknown>, field: string) => { config: object };
}

export interface ImportRequest {
  instanceId: string;
  /** The instance's domain, for the primary domains of new organisations. */
  instanceDomain: string;
  creator: string;
  orgs: DataOrg[];
  /** On the server's clock (`es.clock`). */
  deadline: number;
  /** Told the organisations' count, each one started, each step and the objects it placed (a job's progress). */
  progress?: ReportProgress;
}

export interface ImportResult {
  errors: ImportError[];
  success: { orgs: ImportSuccessOrg[] };
}

/** The timeout ran out, with what was done so far (the API answers DEADLINE_EXCEEDED with it). */
export class ImportDeadline extends TimedOut {
  constructor(readonly result: ImportResult) {
    super("the import's timeout ran out; what is reported was completed, run the same import again for the rest", [
      { "@type": "type.googleapis.com/svc.admin.v1.ImportDataResponse", ...result },
    ]);
  }
}

/** One organisation being imported: what each step of `import-data.ts` reads and reports into. */
export interface OrgImport {
  deps: ImportDeps;
  req: ImportRequest;
  data: DataOrg;
  orgId: string;
  /** The organisation's line of the report: each step adds the IDs it completed. */
  ok: ImportSuccessOrg;
  /** Instance and creator, as every command takes them. */
  base: { instanceId: string; creator: string };
  /** Runs one object's import; its failure is reported under `type` and `id` and the import goes on. */
  each(type: string, id: string, run: () => Promise<void>): Promise<void>;
  /** Reports a failed object, or rethrows what is not the entry's fault (the deadline, a fault of the server). */
  fail(type: string, id: string, err: unknown): void;
  /** Throws ImportDeadline when the timeout ran out. */
  check(): void;
}

export const isCode = (err: unknown, code: Code) => err instanceof ConnectError && err.code === code;

type Table = "user" | "project" | "application";

/** Whether the object of this ID is already there (in this instance; in another: ALREADY_EXISTS, IDs are global). */
export async function alreadyThere(db: Database, table: Table, id: string, instanceId: string): Promise<boolean> {
  const row = await (db.prisma[table] as unknown as { findUnique(a: object): Promise<{ instanceId: string } | null> }).findUnique({
    where: { id },
    select: { instanceId: true },
  });
  if (row && row.instanceId !== instanceId) throw errors.alreadyExists("IMPORT-1dx0", `the ${table} ID "${id}" is used in another instance`);
  return !!row;
}

/** NOT_FOUND naming `field` unless the referenced object is in the instance. */
export async function inInstance(db: Database, table: Table, id: string, instanceId: string, field: string): Promise<void> {
  const row = await (db.prisma[table] as unknown as { findFirst(a: object): Promise<object | null> }).findFirst({
    where: { id, instanceId },
    select: { id: true },
  });
  if (!row) throw errors.notFound("IMPORT-r3f0", `${field}: ${table} "${id}" not found`);
}

/** NOT_FOUND naming `field` unless the project is one of the organisation's. */
export async function projectInOrg(db: Database, id: string, orgId: string, field: string): Promise<void> {
  const row = await db.prisma.project.findFirst({ where: { id, orgId }, select: { id: true } });
  if (!row) throw errors.notFound("IMPORT-r3f1", `${field}: project "${id}" not found in organization "${orgId}"`);
}
