import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  GetExportDataResponseSchema,
  GetPortabilityJobResponseSchema,
  ListPortabilityJobsResponseSchema,
  type PortabilityJob,
  PortabilityJobKind,
  PortabilityJobSchema,
  type PortabilityService,
  PortabilityJobState,
  StartExportResponseSchema,
  StartImportResponseSchema,
} from "../../../gen/svc/resources/portability/v3alpha/portability_service_pb.js";
import { callInfo, type CallInfo } from "../../authz/context.js";
import { importData } from "../../command/import/data.js";
import { importCreator } from "../../command/import/human.js";
import { INTERRUPTED_AFTER_MS, JOB_TTL_MS, type JobDeps, type JobKind, startJob } from "../../command/portability-jobs.js";
import { camelKeys } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { ExportQueries } from "../../query/export-data.js";
import { PortabilityJobQueries, type PortabilityJobRow } from "../../query/portability-jobs.js";
import type { SettingsQueries } from "../../query/settings.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import { exportChunks } from "./export.js";
import { idpConfig, orgsOf } from "./routes.js";

export interface PortabilityJobDeps extends JobDeps {
  es: EventStore;
  settings: SettingsQueries;
  tenancy: TenancyQueries;
}

const permissionOf: Record<JobKind, string> = { export: "iam.export", import: "iam.import" };

/**
 * Export and import as jobs (the proto's PortabilityService; docs/decisions.md "Console"): the same export and
 * import as POST /admin/v1/export and /admin/v1/import, run in the background with their progress in a row.
 */
export function portabilityService(deps: PortabilityJobDeps): ServiceImpl<typeof PortabilityService> {
  const { db } = deps;
  const jobs = new PortabilityJobQueries(db);
  const now = () => deps.clock.now();
  const since = () => new Date(now() - JOB_TTL_MS);

  const toJob = (j: PortabilityJobRow): PortabilityJob => {
    const interrupted = j.state === "running" && now() - j.changeDate.getTime() > INTERRUPTED_AFTER_MS;
    return create(PortabilityJobSchema, {
      id: j.id,
      kind: j.kind === "export" ? PortabilityJobKind.EXPORT : PortabilityJobKind.IMPORT,
      state: interrupted
        ? PortabilityJobState.INTERRUPTED
        : j.state === "done"
          ? PortabilityJobState.DONE
          : j.state === "failed"
            ? PortabilityJobState.FAILED
            : PortabilityJobState.RUNNING,
      done: j.done,
      total: j.total,
      phase: j.phase,
      orgName: j.orgName,
      objects: BigInt(j.objects),
      creator: j.creator,
      creationDate: timestampFromDate(j.createdAt),
      changeDate: timestampFromDate(j.changeDate),
      error: j.error,
      issues: j.issues as { type: string; id: string; message: string }[],
      dataSize: BigInt(j.dataSize),
    });
  };

  /** The instance's job of this ID from the last day, readable with its kind's permission; else NOT_FOUND / PERMISSION_DENIED. */
  async function jobOf(info: CallInfo, id: string) {
    const instance = info.target.instance;
    const job = await jobs.byId(instance.id, id, since());
    if (!job) throw errors.notFound("PORT-j0b0", `job "${id}" not found`);
    info.authorize({ type: "instance", instance }, permissionOf[job.kind as JobKind]);
    return job;
  }

  const mayRead = (info: CallInfo, kind: JobKind) => info.permissions.has(permissionOf[kind]);

  return {
    async startExport(req, ctx) {
      const info = callInfo(ctx);
      const instanceId = info.target.instance.id;
      const job = await startJob(deps, { instanceId, kind: "export", creator: info.caller.userId }, async (report) => {
        const parts: string[] = [];
        const options = { orgIds: req.orgIds, excludedOrgIds: req.excludedOrgIds, withPasswords: req.withPasswords, withOtp: req.withOtp };
        for await (const c of exportChunks(new ExportQueries(db), deps.box, instanceId, { ...options, checkDeadline: () => {}, progress: report }))
          parts.push(c);
        return { data: parts.join("") };
      });
      return create(StartExportResponseSchema, { job: toJob(job) });
    },

    async startImport(req, ctx) {
      const info = callInfo(ctx);
      const instance = info.target.instance;
      let parsed: unknown;
      try {
        parsed = camelKeys(JSON.parse(req.dataJson));
      } catch {
        throw errors.invalidArgument("PORT-js0n", "invalid data_json: is not valid JSON");
      }
      // checked before the job starts: a file that is no export is the caller's mistake, said at once
      const orgs = orgsOf(parsed, "data_json");
      const domain = (await deps.tenancy.domainsOf(instance.id))[0] ?? "localhost";
      const job = await startJob(deps, { instanceId: instance.id, kind: "import", creator: info.caller.userId }, async (report) => {
        const request = {
          instanceId: instance.id,
          instanceDomain: domain,
          creator: importCreator(info.caller.userId),
          orgs,
          deadline: Number.POSITIVE_INFINITY,
        };
        const result = await importData({ ...deps, idpConfig }, { ...request, progress: report });
        return { issues: result.errors };
      });
      return create(StartImportResponseSchema, { job: toJob(job) });
    },

    async getPortabilityJob(req, ctx) {
      return create(GetPortabilityJobResponseSchema, { job: toJob(await jobOf(callInfo(ctx), req.id)) });
    },

    async listPortabilityJobs(_req, ctx) {
      const info = callInfo(ctx);
      const kinds = (["export", "import"] as const).filter((k) => mayRead(info, k));
      const rows = await jobs.list(info.target.instance.id, kinds, since());
      return create(ListPortabilityJobsResponseSchema, { result: rows.map(toJob) });
    },

    async getExportData(req, ctx) {
      const job = await jobOf(callInfo(ctx), req.id);
      if (job.kind !== "export") throw errors.failedPrecondition("PORT-n0tx", `job "${req.id}" is an import: it has no data to read`);
      if (job.state !== "done" || job.data === null) throw errors.failedPrecondition("PORT-n0td", `job "${req.id}" has not finished exporting`);
      return create(GetExportDataResponseSchema, { dataJson: deps.box.open(job.data) });
    },
  };
}
