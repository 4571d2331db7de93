import type { Prisma as P } from "../../gen/prisma/client.js";
import { ProviderFieldName, type ProviderSearchFilter } from "../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { State } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { SecretBox } from "../crypto/secrets.js";
import type { ProviderConfig, ProviderKind, ProviderType } from "../domain/notification-providers.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, textFilter, type SearchRequest, type Searchable } from "./list.js";
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

const providers: Searchable<
  ProviderSearchFilter,
  P.NotificationProviderWhereInput,
  P.NotificationProviderOrderByWithRelationInput,
  ProviderView,
  ProviderFieldName
> = {
  table: "notificationProvider",
  sources: tableSources.notificationProvider,
  filters: {
    description: (v) => ({ description: textFilter(v.description, v.method) }),
    inIds: (v) => ({ id: { in: v.ids } }),
    state: (v) => (v.state === State.EFFECTIVE_STATE_ACTIVE ? { active: true } : { active: false }),
  },
  sortColumns: {
    [ProviderFieldName.ID]: "id",
    [ProviderFieldName.CREATION_DATE]: "createdAt",
    [ProviderFieldName.CHANGE_DATE]: "changeDate",
    [ProviderFieldName.DESCRIPTION]: "description",
  },
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
    return this.db.prisma.notificationProvider.findFirst({ where: { instanceId, kind, id }, select: providerColumns });
  }

  search(instanceId: string, kind: ProviderKind, req: SearchRequest<ProviderSearchFilter, ProviderFieldName>) {
    return search(this.db, this.cache, providers, [{ instanceId, kind }], req);
  }

  /** A provider with its secret opened, for sending (the `_test` RPCs, the notification worker). */
  async usable(instanceId: string, kind: ProviderKind, id: string): Promise<UsableProvider | null> {
    const row = await this.db.prisma.notificationProvider.findFirst({ where: { instanceId, kind, id } });
    return row ? this.toUsable(row) : null;
  }

  /** The instance's active provider of a kind, or null (mail then goes through the system default). */
  active(instanceId: string, kind: ProviderKind): Promise<UsableProvider | null> {
    return this.cache.get(
      `notification-provider:${instanceId}:${kind}`,
      async () => {
        const row = await this.db.prisma.notificationProvider.findFirst({ where: { instanceId, kind, active: true } });
        return row ? this.toUsable(row) : null;
      },
      readFrom("notificationProvider"),
    );
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
