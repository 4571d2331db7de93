import type { Prisma as P } from "../../gen/prisma/client.js";
import type { TargetConfig } from "../command/targets.js";
import type { SecretBox } from "../crypto/secrets.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";

export type TargetRow = Awaited<ReturnType<Database["prisma"]["target"]["findFirstOrThrow"]>>;
export type ExecutionRow = Awaited<ReturnType<Database["prisma"]["execution"]["findFirstOrThrow"]>>;

/** A target as the runtime calls it: the signing key decrypted. */
export interface CallableTarget extends TargetConfig {
  id: string;
  signingKey: string;
}

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

  async searchTargets(where: P.TargetWhereInput, orderBy: P.TargetOrderByWithRelationInput[], skip: number, take: number) {
    const [rows, total] = await Promise.all([this.db.prisma.target.findMany({ where, orderBy, skip, take }), this.db.prisma.target.count({ where })]);
    return { rows, total };
  }

  async searchExecutions(where: P.ExecutionWhereInput, order: "asc" | "desc", skip: number, take: number) {
    const [rows, total] = await Promise.all([
      this.db.prisma.execution.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
      this.db.prisma.execution.count({ where }),
    ]);
    return { rows, total };
  }

  /**
   * The targets to call for the most specific existing execution among `ids` (most specific first), with
   * includes expanded in place after the execution's own targets. Cached until the next committed event.
   */
  targetsFor(instanceId: string, ids: string[]): Promise<CallableTarget[]> {
    return this.cache.get(`exec:${instanceId}:${ids.join("|")}`, async () => {
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
      const rows = await this.db.prisma.target.findMany({ where: { instanceId, id: { in: targetIds } } });
      return targetIds.flatMap((id) => {
        const t = rows.find((r) => r.id === id);
        return t ? [{ ...t, targetType: t.targetType as CallableTarget["targetType"], signingKey: this.box.open(t.signingKey) }] : [];
      });
    });
  }
}
