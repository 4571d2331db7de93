import type { EventStore } from "../eventstore/eventstore.js";
import type { ProjectionCache } from "../query/cache.js";
import type { TenancyQueries } from "../query/tenancy.js";
import type { Database } from "../storage/database.js";

/** What a resource service writes and reads with: the event store, the database with its projection cache, and the tenancy (scopes). */
export interface ResourceDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  tenancy: TenancyQueries;
}
