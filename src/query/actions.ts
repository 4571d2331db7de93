import type { Prisma as P } from "../../gen/prisma/client.js";
import { ExecutionType, type Condition, type ExecutionSearchFilter } from "../../gen/svc/resources/action/v3alpha/execution_pb.js";
import { TargetFieldName, type TargetSearchFilter } from "../../gen/svc/resources/action/v3alpha/target_pb.js";
import type { TargetConfig } from "../domain/targets.js";
import type { SecretBox } from "../crypto/secrets.js";
import { errors } from "../errors/errors.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readFrom, readRow, tableSources } from "./sources.js";
import { search, textFilter, type SearchRequest, type Searchable } from "./list.js";

export type TargetRow = Awaited<ReturnType<Database["prisma"]["target"]["findFirstOrThrow"]>>;
export type ExecutionRow = Awaited<ReturnType<Database["prisma"]["execution"]["findFirstOrThrow"]>>;

/** The columns of a target's answer (`toGetTarget`): not the signing key. */
const targetColumns = {
  id: true,
  instanceId: true,
  name: true,
  targetType: true,
  url: true,
  timeoutMs: true,
  isAsync: true,
  interruptOnError: true,
  sequence: true,
  changeDate: true,
} satisfies P.TargetSelect;
export type TargetView = P.TargetGetPayload<{ select: typeof targetColumns }>;

/** The columns of an execution's answer (`toGetExecution`). */
const executionColumns = { id: true, instanceId: true, targets: true, includes: true, sequence: true, changeDate: true } satisfies P.ExecutionSelect;
export type ExecutionView = P.ExecutionGetPayload<{ select: typeof executionColumns }>;

/** A target as the runtime calls it: the signing key decrypted. */
export interface CallableTarget extends TargetConfig {
  id: string;
  signingKey: string;
}

/** The ID of the execution of a condition (the API knows the methods and events conditions name). */
export type ConditionId = (c: Condition, field: string) => string;

const targets: Searchable<TargetSearchFilter, P.TargetWhereInput, P.TargetOrderByWithRelationInput, TargetView, TargetFieldName> = {
  table: "target",
  sources: tableSources.target,
  filters: {
    name: (v) => ({ name: textFilter(v.name, v.method) }),
    inIds: (v) => ({ id: { in: v.ids } }),
  },
  sortColumns: {
    [TargetFieldName.ID]: "id",
    [TargetFieldName.CREATION_DATE]: "createdAt",
    [TargetFieldName.CHANGE_DATE]: "changeDate",
    [TargetFieldName.NAME]: "name",
    [TargetFieldName.TARGET_TYPE]: "targetType",
    [TargetFieldName.URL]: "url",
    [TargetFieldName.TIMEOUT]: "timeoutMs",
    [TargetFieldName.ASYNC]: "isAsync",
    [TargetFieldName.INTERRUPT_ON_ERROR]: "interruptOnError",
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  // Names are unique in an instance: sorted by alone, so that the (instance, name) index serves the sort.
  unique: ["id", "name"],
  select: targetColumns,
};

const executionTypes: Record<ExecutionType, string | undefined> = {
  [ExecutionType.UNSPECIFIED]: undefined,
  [ExecutionType.REQUEST]: "request",
  [ExecutionType.RESPONSE]: "response",
  [ExecutionType.EVENT]: "event",
  [ExecutionType.FUNCTION]: "function",
};

// The conditions filter needs the API's reading of a condition: declared per search.
const executions = (
  conditionId: ConditionId,
): Searchable<ExecutionSearchFilter, P.ExecutionWhereInput, P.ExecutionOrderByWithRelationInput, ExecutionView> => ({
  table: "execution",
  sources: tableSources.execution,
  filters: {
    inConditions: (v, field) => ({ id: { in: v.conditions.map((c, j) => conditionId(c, `${field}.in_conditions.conditions[${j}]`)) } }),
    executionType: (v, field) => {
      const type = executionTypes[v.type];
      if (!type) throw errors.invalidArgument("EXEC-typ1", `invalid ${field}.execution_type.type: an execution type is required`);
      return { conditionType: type };
    },
    target: (v) => ({ targets: { has: v.id } }),
    include: (v) => ({ includes: { has: v.include } }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: executionColumns,
});

// Includes are acyclic (checked on write); this bounds a walk anyway.
const MAX_INCLUDE_DEPTH = 10;

export class ActionQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
    private readonly box: SecretBox,
  ) {}

  target(instanceId: string, id: string) {
    return this.db.prisma.target.findFirst({ where: { instanceId, id } });
  }

  searchTargets(instanceId: string, req: SearchRequest<TargetSearchFilter, TargetFieldName>) {
    return search(this.db, this.cache, targets, [{ instanceId }], req);
  }

  searchExecutions(instanceId: string, req: SearchRequest<ExecutionSearchFilter, number>, conditionId: ConditionId) {
    return search(this.db, this.cache, executions(conditionId), [{ instanceId }], req);
  }

  /**
   * The targets to call for the most specific existing execution among `ids` (most specific first), with
   * includes expanded in place after the execution's own targets. Cached in two parts: which targets (until
   * an execution changes), and those targets' rows (until one of them changes), so that creating an
   * unrelated target does not make every call read its executions again.
   */
  async targetsFor(instanceId: string, ids: string[]): Promise<CallableTarget[]> {
    const targetIds = await this.cache.get(`exec:${instanceId}:${ids.join("|")}`, () => this.executionTargetIds(instanceId, ids), readFrom("execution"));
    if (!targetIds.length) return [];
    return this.cache.get(
      `exec-targets:${instanceId}:${targetIds.join("|")}`,
      async () => {
        const rows = await this.db.prisma.target.findMany({ where: { instanceId, id: { in: targetIds } } });
        return targetIds.flatMap((id) => {
          const t = rows.find((r) => r.id === id);
          return t ? [{ ...t, targetType: t.targetType as CallableTarget["targetType"], signingKey: this.box.open(t.signingKey) }] : [];
        });
      },
      [...new Set(targetIds)].flatMap((id) => readRow("target", id)),
    );
  }

  private async executionTargetIds(instanceId: string, ids: string[]): Promise<string[]> {
    const found = await this.db.prisma.execution.findMany({ where: { instanceId, id: { in: ids } } });
    const best = ids.map((id) => found.find((x) => x.id === id)).find((x) => x !== undefined);
    if (!best) return [];
    const targetIds: string[] = [];
    const expand = async (x: ExecutionRow, depth: number) => {
      targetIds.push(...x.targets);
      if (depth >= MAX_INCLUDE_DEPTH) return;
      for (const inc of x.includes) {
        const child = await this.db.prisma.execution.findUnique({ where: { instanceId_id: { instanceId, id: inc } } });
        if (child) await expand(child, depth + 1);
      }
    };
    await expand(best, 0);
    return targetIds;
  }
}
