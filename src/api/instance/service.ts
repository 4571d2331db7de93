import { create } from "@bufbuild/protobuf";
import { durationMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  BulkLimitResponseSchema,
  type InstanceService,
  type Limits,
  LimitResponseSchema,
} from "../../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { instanceHandlers } from "./instances.js";
import { callInfo } from "../../authz/context.js";
import { type LimitsChange, setInstanceLimits } from "../../command/instance-limits.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { InstanceQueries } from "../../query/instances.js";
import type { SettingsQueries } from "../../query/settings.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";

export interface InstanceDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  settings: SettingsQueries;
}

const HOUR_S = 3600;
const MAX_RETENTION_S = 100 * 365 * 86_400;

function changeOf(l: Limits, field: string): LimitsChange {
  if (l.auditLogRetention && l.resetAuditLogRetention)
    throw errors.invalidArgument("LIMIT-b0th", `invalid ${field}: audit_log_retention and reset_audit_log_retention exclude each other`);
  let retention: number | null | undefined;
  if (l.auditLogRetention) {
    retention = Math.floor(durationMs(l.auditLogRetention) / 1000);
    if (retention < HOUR_S || retention > MAX_RETENTION_S)
      throw errors.invalidArgument("LIMIT-r3tn", `invalid ${field}.audit_log_retention: must be from 1h to 100 years`);
  } else if (l.resetAuditLogRetention) retention = null;
  return { ...(l.block !== undefined ? { block: l.block } : {}), ...(retention !== undefined ? { auditLogRetentionS: retention } : {}) };
}

/** Instances in the system context: their limits (block, audit log retention), one or several at once. */
export function instanceService(deps: InstanceDeps): ServiceImpl<typeof InstanceService> {
  const instances = new InstanceQueries(deps.db, deps.cache);
  const limit = async (creator: string, items: { instanceId: string; limits: Limits; field: string }[]) => {
    const limits = items.map((i) => ({ instanceId: i.instanceId, field: i.field, change: changeOf(i.limits, i.field) }));
    await setInstanceLimits(deps.es, { creator, limits });
    const rows = await instances.byIds(items.map((i) => i.instanceId));
    return items.map((i) => {
      const row = rows.find((r) => r.id === i.instanceId)!;
      return toResourceDetails({ id: row.id, sequence: row.sequence, changeDate: row.changeDate, resourceOwner: row.id }, "instance");
    });
  };
  return {
    ...instanceHandlers(deps, instances),
    async limit(req, ctx) {
      const [details] = await limit(callInfo(ctx).caller.userId, [{ instanceId: req.instanceId, limits: req.limits!, field: "limits" }]);
      return create(LimitResponseSchema, { details });
    },
    async bulkLimit(req, ctx) {
      if (!req.limits.length) throw errors.invalidArgument("LIMIT-n0ne", "invalid limits: give at least one instance");
      const items = req.limits.map((l, i) => ({ instanceId: l.instanceId, limits: l.limits!, field: `limits[${i}]` }));
      return create(BulkLimitResponseSchema, { details: await limit(callInfo(ctx).caller.userId, items) });
    },
  };
}
