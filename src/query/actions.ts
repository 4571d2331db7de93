import type { Prisma as P } from "../../gen/prisma/client.js";
import type { TargetConfig } from "../domain/targets.js";
import type { SecretBox } from "../crypto/secrets.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readFrom, readRow, tableSources } from "./sources.js";
import { search, textFilter, type ListWindow, type SearchRequest, type Searchable, type TextCriterion } from "./list.js";

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

/** What a target search filters by. */
export type TargetFilter = { case: "name"; value: TextCriterion } | { case: "inIds"; value: string[] };

export type TargetSort = "id" | "creationDate" | "changeDate" | "name" | "targetType" | "url" | "timeout" | "async" | "interruptOnError";

const targets: Searchable<TargetFilter, P.TargetWhereInput, P.TargetOrderByWithRelationInput, TargetView, TargetSort> = {
  table: "target",
  sources: tableSources.target,
  filters: {
    name: (v) => ({ name: textFilter(v) }),
    inIds: (ids) => ({ id: { in: ids } }),
  },
  sortColumns: {
    id: "id",
    creationDate: "createdAt",
    changeDate: "changeDate",
    name: "name",
    targetType: "targetType",
    url: "url",
    timeout: "timeoutMs",
    async: "isAsync",
    interruptOnError: "interruptOnError",
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  // Names are unique in an instance: sorted by alone, so that the (instance, name) index serves the sort.
  unique: ["id", "name"],
  select: targetColumns,
};

/**
 * What an execution search filters by: `inConditions` the IDs of the conditions' executions, `executionType` the
 * type of condition (request, response, event, function).
 */
export type ExecutionFilter =
  | { case: "inConditions"; value: string[] }
  | { case: "executionType"; value: string }
  | { case: "target"; value: string }
  | { case: "include"; value: string };

const executions: Searchable<ExecutionFilter, P.ExecutionWhereInput, P.ExecutionOrderByWithRelationInput, ExecutionView> = {
  table: "execution",
  sources: tableSources.execution,
  filters: {
    inConditions: (ids) => ({ id: { in: ids } }),
    executionType: (conditionType) => ({ conditionType }),
    target: (id) => ({ targets: { has: id } }),
    include: (id) => ({ includes: { has: id } }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: executionColumns,
};

// Includes are acyclic (checked on write); this bounds a walk anyway.
const MAX_INCLUDE_DEPTH = 10;

export class ActionQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
    private readonly box: SecretBox,
  ) {}

  target(instanceId: string, id: string) {
    return this.db.reads.prisma.target.findFirst({ where: { instanceId, id } });
  }

  searchTargets(instanceId: string, req: SearchRequest<TargetFilter, TargetSort>, window: ListWindow) {
    return search(this.db, this.cache, targets, [{ instanceId }], req, window);
  }

  searchExecutions(instanceId: string, req: SearchRequest<ExecutionFilter>, window: ListWindow) {
    return search(this.db, this.cache, executions, [{ instanceId }], req, window);
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
        const rows = await this.db.reads.prisma.target.findMany({ where: { instanceId, id: { in: targetIds } } });
        return targetIds.flatMap((id) => {
          const t = rows.find((r) => r.id === id);
          return t ? [{ ...t, targetType: t.targetType as CallableTarget["targetType"], signingKey: this.box.open(t.signingKey) }] : [];
        });
      },
      [...new Set(targetIds)].flatMap((id) => readRow("target", id)),
    );
  }

  private async executionTargetIds(instanceId: string, ids: string[]): Promise<string[]> {
    const found = await this.db.reads.prisma.execution.findMany({ where: { instanceId, id: { in: ids } } });
    const best = ids.map((id) => found.find((x) => x.id === id)).find((x) => x !== undefined);
    if (!best) return [];
    const targetIds: string[] = [];
    const expand = async (x: ExecutionRow, depth: number) => {
      targetIds.push(...x.targets);
      if (depth >= MAX_INCLUDE_DEPTH) return;
      for (const inc of x.includes) {
        const child = await this.db.reads.prisma.execution.findUnique({ where: { instanceId_id: { instanceId, id: inc } } });
        if (child) await expand(child, depth + 1);
      }
    };
    await expand(best, 0);
    return targetIds;
  }
}
