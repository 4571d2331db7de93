import type { Prisma as P } from "../../gen/prisma/client.js";
import type { SecretBox } from "../crypto/secrets.js";
import type { ProviderConfig, ProviderKind, ProviderType } from "../domain/notification-providers.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, textFilter, type ListWindow, type SearchRequest, type Searchable, type TextCriterion } from "./list.js";
import { readFrom, tableSources } from "./sources.js";

/** The columns of a provider's answer: not its secret. */
const providerColumns = {
  id: true,
  instanceId: true,
  kind: true,
  providerType: true,
  description: true,
  config: true,
  active: true,
  sequence: true,
  changeDate: true,
} satisfies P.NotificationProviderSelect;
export type ProviderView = P.NotificationProviderGetPayload<{ select: typeof providerColumns }>;

/** A provider as a sender uses it: the secret opened. */
export interface UsableProvider {
  id: string;
  providerType: ProviderType;
  config: ProviderConfig;
  secret: string;
}

/** What a provider search filters by. */
export type ProviderFilter =
  | { case: "description"; value: TextCriterion }
  | { case: "inIds"; value: string[] }
  | { case: "state"; value: "active" | "inactive" };

export type ProviderSort = "id" | "creationDate" | "changeDate" | "description";

const providers: Searchable<ProviderFilter, P.NotificationProviderWhereInput, P.NotificationProviderOrderByWithRelationInput, ProviderView, ProviderSort> = {
  table: "notificationProvider",
  sources: tableSources.notificationProvider,
  filters: {
    description: (v) => ({ description: textFilter(v) }),
    inIds: (ids) => ({ id: { in: ids } }),
    state: (state) => ({ active: state === "active" }),
  },
  sortColumns: { id: "id", creationDate: "createdAt", changeDate: "changeDate", description: "description" },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
  select: providerColumns,
};

export class NotificationProviderQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
    private readonly box: SecretBox,
  ) {}

  provider(instanceId: string, kind: ProviderKind, id: string): Promise<ProviderView | null> {
    return this.db.reads.prisma.notificationProvider.findFirst({ where: { instanceId, kind, id }, select: providerColumns });
  }

  search(instanceId: string, kind: ProviderKind, req: SearchRequest<ProviderFilter, ProviderSort>, window: ListWindow) {
    return search(this.db, this.cache, providers, [{ instanceId, kind }], req, window);
  }

  /** A provider with its secret opened, for sending (the `_test` RPCs, the notification worker). */
  async usable(instanceId: string, kind: ProviderKind, id: string): Promise<UsableProvider | null> {
    const row = await this.db.reads.prisma.notificationProvider.findFirst({ where: { instanceId, kind, id } });
    return row ? this.toUsable(row) : null;
  }

  /** The instance's active provider of a kind, or null (mail then goes through the system default). */
  active(instanceId: string, kind: ProviderKind): Promise<UsableProvider | null> {
    return this.cache.get(
      `notification-provider:${instanceId}:${kind}`,
      async () => {
        const row = await this.db.reads.prisma.notificationProvider.findFirst({ where: { instanceId, kind, active: true } });
        return row ? this.toUsable(row) : null;
      },
      readFrom("notificationProvider"),
    );
  }

  /**
   * The instance's active provider of a kind read from the primary, neither the cache nor a replica: where the
   * cache has none, the notification worker asks here before a message waits for one (src/notification/channels.ts).
   */
  async activeOnPrimary(instanceId: string, kind: ProviderKind): Promise<UsableProvider | null> {
    const row = await this.db.prisma.notificationProvider.findFirst({ where: { instanceId, kind, active: true } });
    return row ? this.toUsable(row) : null;
  }

  private toUsable(row: { id: string; providerType: string; config: unknown; secret: string }): UsableProvider {
    return {
      id: row.id,
      providerType: row.providerType as ProviderType,
      config: row.config as ProviderConfig,
      secret: row.secret ? this.box.open(row.secret) : "",
    };
  }
}
