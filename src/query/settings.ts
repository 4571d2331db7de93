import { chainOfTarget, ownerOf, type ContextOwner, type Target } from "../domain/contexts.js";
import { resolveAlong, type ResolvedValue, type StoredValues } from "../domain/settings.js";
import type { SettingsKind, SettingsValues } from "../domain/settings-kinds.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readFrom } from "./sources.js";

export type { ResolvedValue } from "../domain/settings.js";

export interface SettingsRow {
  values: StoredValues;
  sequence: number;
  changeDate: Date;
}

/** What a read of a kind in one context answers: every property resolved, and the context's own details. */
export interface SettingsRead {
  values: Map<string, ResolvedValue>;
  details: { sequence: number; changeDate: Date | undefined; owner: ContextOwner };
}

/** Inherited settings (src/domain/settings.ts): a property set in a context wins over its parents'. */
export class SettingsQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  /** What one context itself set. */
  row(kind: SettingsKind, owner: ContextOwner): Promise<SettingsRow | null> {
    return this.cache.get(
      `settings:${kind}:${owner.type}:${owner.id}`,
      async () => {
        const row = await this.db.reads.prisma.setting.findUnique({
          where: { kind_ownerType_ownerId: { kind, ownerType: owner.type, ownerId: owner.id } },
        });
        return row ? { values: row.values as StoredValues, sequence: row.sequence, changeDate: row.changeDate } : null;
      },
      readFrom("setting"),
    );
  }

  /**
   * Every property of the kind along `chain` (the context asked about, then its parents up to the system).
   * The built-in values are the registry's; a third argument, once the defaults, is ignored.
   */
  async resolve(kind: SettingsKind, chain: readonly ContextOwner[]): Promise<Map<string, ResolvedValue>> {
    const rows = await Promise.all(chain.map((o) => this.row(kind, o)));
    return resolveAlong(
      kind,
      chain,
      rows.map((r) => r?.values),
    );
  }

  /** The values in force, typed as the kind declares them. */
  async values<K extends SettingsKind>(kind: K, chain: readonly ContextOwner[]): Promise<SettingsValues<K>> {
    const resolved = await this.resolve(kind, chain);
    return Object.fromEntries([...resolved].map(([name, v]) => [name, v.value])) as SettingsValues<K>;
  }

  /**
   * The values set along `chain` (the most specific context's first) of the kind's properties whose names start
   * with `prefix`, without resolving the others: a login page needs its language's labels, not all 970 texts.
   * Properties no context set are absent (their built-in values are the caller's to supply).
   */
  async setWithPrefix(kind: SettingsKind, chain: readonly ContextOwner[], prefix: string): Promise<Record<string, unknown>> {
    const rows = await Promise.all(chain.map((o) => this.row(kind, o)));
    const out: Record<string, unknown> = {};
    for (const row of rows) {
      for (const [name, value] of Object.entries(row?.values ?? {})) if (name.startsWith(prefix) && !(name in out)) out[name] = value;
    }
    return out;
  }

  /** A read in the request's context. */
  async read(kind: SettingsKind, target: Target): Promise<SettingsRead> {
    const owner = ownerOf(target);
    const [values, own] = await Promise.all([this.resolve(kind, chainOfTarget(target)), this.row(kind, owner)]);
    return { values, details: { sequence: own?.sequence ?? 0, changeDate: own?.changeDate, owner } };
  }
}

/**
 * What one context itself set of the kind ({} for nothing), read from the table rather than the cache: a
 * command copying it (branding's activation) must copy what the last write stored.
 */
export async function storedValuesOf(db: Database, kind: SettingsKind, owner: ContextOwner): Promise<StoredValues> {
  const row = await db.reads.prisma.setting.findUnique({ where: { kind_ownerType_ownerId: { kind, ownerType: owner.type, ownerId: owner.id } } });
  return (row?.values ?? {}) as StoredValues;
}
