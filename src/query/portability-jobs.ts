import type { Database } from "../storage/database.js";

/** Reads of export and import jobs (src/command/portability-jobs.ts writes them): those of an instance since a time. */
export class PortabilityJobQueries {
  constructor(private readonly db: Database) {}

  byId(instanceId: string, id: string, since: Date) {
    return this.db.prisma.portabilityJob.findFirst({ where: { id, instanceId, createdAt: { gte: since } } });
  }

  /** Newest first, at most 100. */
  list(instanceId: string, kinds: string[], since: Date) {
    return this.db.prisma.portabilityJob.findMany({
      where: { instanceId, kind: { in: kinds }, createdAt: { gte: since } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: 100,
    });
  }
}

export type PortabilityJobRow = NonNullable<Awaited<ReturnType<PortabilityJobQueries["byId"]>>>;
