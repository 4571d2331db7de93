import type { JsonObject } from "@bufbuild/protobuf";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SecretBox } from "../../crypto/secrets.js";
import { camelKeys, TimedOut, type DataOrg } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { importData, timeoutOf } from "../../command/import/data.js";
import { importCreator } from "../../command/import/human.js";
import { ExportQueries } from "../../query/export-data.js";
import type { SettingsQueries } from "../../query/settings.js";
import type { Database } from "../../storage/database.js";
import type { IdpKind } from "../../domain/idps.js";
import type { TargetAddressPolicy } from "../../domain/target-addresses.js";
import { readImport, writeExport, type Location } from "../../storage/object-storage.js";
import { configOfJson, kindMessages } from "../idp/kinds.js";
import { exportChunks } from "./export.js";
import { authenticate, authorize, registerJsonRoutes, type HttpAuthDeps } from "./http.js";
import { importHumanUser } from "./user-import.js";

export interface PortabilityDeps extends HttpAuthDeps {
  es: EventStore;
  db: Database;
  box: SecretBox;
  settings: SettingsQueries;
  /** SVC_EXPORT_DIR: each instance's local files are in its own directory under it (`<dir>/<instance ID>/`). */
  exportDir: string;
  /** SVC_TARGET_DENY: where an S3 endpoint of a request may not lead. */
  targetPolicy: TargetAddressPolicy;
  /** The largest import body (larger data: from a file or object storage). */
  importBodyLimit: number;
}

const invalid = (field: string, why: string) => errors.invalidArgument("PORT-f1eld", `invalid ${field}: ${why}`);

function stringList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) throw invalid(field, "must be a list of strings");
  return v as string[];
}

const outputs = { localOutput: ["local", "local_output"], s3Output: ["s3", "s3_output"], gcsOutput: ["gcs", "gcs_output"] } as const;
const inputs = {
  dataOrgsLocal: ["local", "data_orgs_local"],
  dataOrgsv1Local: ["local", "data_orgsv1_local"],
  dataOrgsS3: ["s3", "data_orgs_s3"],
  dataOrgsv1S3: ["s3", "data_orgsv1_s3"],
  dataOrgsGcs: ["gcs", "data_orgs_gcs"],
  dataOrgsv1Gcs: ["gcs", "data_orgsv1_gcs"],
} as const;

/** The one location among `fields` the body names, or undefined; INVALID_ARGUMENT when it names several. */
function locationIn(body: Record<string, unknown>, fields: Record<string, readonly [Location["kind"], string]>, what: string) {
  const given = Object.keys(fields).filter((k) => body[k] !== undefined && body[k] !== null);
  if (given.length > 1)
    throw invalid(
      what,
      `give at most one of ${Object.values(fields)
        .map(([, f]) => f)
        .join(", ")}`,
    );
  const key = given[0];
  if (!key) return undefined;
  const at = body[key];
  const [kind, field] = fields[key]!;
  if (!at || typeof at !== "object" || Array.isArray(at)) throw invalid(field, "must be an object");
  return { loc: { kind, at } as Location, field };
}

/** The DataOrg list of an import body, an export file or the migration tool's output. */
export function orgsOf(data: unknown, field: string): DataOrg[] {
  const d = data as { orgs?: unknown; dataOrgs?: { orgs?: unknown } } | null;
  const orgs = d && typeof d === "object" ? (d.orgs ?? d.dataOrgs?.orgs) : undefined;
  if (!Array.isArray(orgs)) throw invalid(`${field}.orgs`, "must be a list of organisations");
  const lists = [
    "domains",
    "humanUsers",
    "machineUsers",
    "projects",
    "projectRoles",
    "oidcApps",
    "apiApps",
    "userGrants",
    "orgMembers",
    "projectMembers",
    "userLinks",
    "gitlabIdps",
  ];
  orgs.forEach((o, i) => {
    if (!o || typeof o !== "object" || Array.isArray(o)) throw invalid(`${field}.orgs[${i}]`, "must be an object");
    for (const l of lists) {
      const v = (o as Record<string, unknown>)[l];
      if (v === undefined || v === null) continue;
      if (!Array.isArray(v) || v.some((e) => !e || typeof e !== "object")) throw invalid(`${field}.orgs[${i}].${l}`, "must be a list of objects");
    }
  });
  return orgs as DataOrg[];
}

async function exportData(deps: PortabilityDeps, req: FastifyRequest, reply: FastifyReply) {
  const { instance, caller } = await authenticate(deps, req);
  authorize(deps, caller, { type: "instance", instance }, "iam.export");
  const body = camelKeys(req.body) as Record<string, unknown>;
  const deadline = deps.es.clock.now() + timeoutOf(body.timeout);
  const output = locationIn(body, outputs, "output");
  const options = {
    orgIds: stringList(body.orgIds, "org_ids"),
    excludedOrgIds: stringList(body.excludedOrgIds, "excluded_org_ids"),
    withPasswords: body.withPasswords === true,
    withOtp: body.withOtp === true,
    checkDeadline: () => {
      if (deps.es.clock.now() >= deadline) throw new TimedOut("the export's timeout ran out before it was complete; nothing was written");
    },
  };
  const chunks = () => exportChunks(new ExportQueries(deps.db), deps.box, instance.id, options);
  if (output) await writeExport(deps.exportDir, instance.id, output.loc, output.field, chunks(), deps.targetPolicy);
  if (!body.responseOutput && output) return reply.type("application/json").send("{}");
  // Inline: built before the answer starts, so that a timeout is still a status, not a cut-off body.
  const parts: string[] = [];
  for await (const c of chunks()) parts.push(c);
  return reply.type("application/json").send(parts.join(""));
}

async function importRequest(deps: PortabilityDeps, req: FastifyRequest) {
  const { instance, caller } = await authenticate(deps, req);
  authorize(deps, caller, { type: "instance", instance }, "iam.import");
  const body = camelKeys(req.body) as Record<string, unknown>;
  const deadline = deps.es.clock.now() + timeoutOf(body.timeout);
  const inline = (["dataOrgs", "dataOrgsv1"] as const).filter((k) => body[k] !== undefined && body[k] !== null);
  const file = locationIn(body, inputs, "data");
  if (inline.length + (file ? 1 : 0) !== 1) {
    throw invalid(
      "data",
      `give exactly one of data_orgs, data_orgsv1, ${Object.values(inputs)
        .map(([, f]) => f)
        .join(", ")}`,
    );
  }
  let orgs: DataOrg[];
  if (file) {
    const text = await readImport(deps.exportDir, instance.id, file.loc, file.field, deps.targetPolicy);
    let parsed: unknown;
    try {
      parsed = camelKeys(JSON.parse(text));
    } catch {
      throw invalid(file.field, "the file is not valid JSON");
    }
    orgs = orgsOf(parsed, file.field);
  } else orgs = orgsOf(body[inline[0]!], inline[0] === "dataOrgs" ? "data_orgs" : "data_orgsv1");
  const domain = (await deps.tenancy.domainsOf(instance.id))[0] ?? "localhost";
  return importData({ ...deps, idpConfig }, { instanceId: instance.id, instanceDomain: domain, creator: importCreator(caller.userId), orgs, deadline });
}

/** An exported provider's configuration checked as a create checks it (ImportDeps.idpConfig). */
export const idpConfig = (kind: IdpKind, json: Record<string, unknown>, field: string) => configOfJson(kindMessages[kind], json as JsonObject, field);

const admin = (method: string) => ({ service: "zitadel.admin.v1.AdminService", method });
const management = (method: string) => ({ service: "zitadel.management.v1.ManagementService", method });

/** POST /admin/v1/export, /admin/v1/import and /management/v1/users/human/_import (JSON over HTTP only). */
export function registerPortability(app: FastifyInstance, deps: PortabilityDeps): void {
  registerJsonRoutes(app, deps.importBodyLimit, [
    { url: "/admin/v1/export", rpc: admin("ExportData"), handler: (req, reply) => exportData(deps, req, reply) },
    { url: "/admin/v1/import", rpc: admin("ImportData"), handler: (req) => importRequest(deps, req) },
    { url: "/management/v1/users/human/_import", rpc: management("ImportHumanUser"), handler: (req) => importHumanUser(deps, req) },
  ]);
}
