import type { ContextType } from "../command/events.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";

export interface SettingsOwner {
  type: ContextType;
  /** "" for the system. */
  id: string;
}

export interface SettingsRow {
  values: Record<string, unknown>;
  sequence: number;
  changeDate: Date;
}

export interface ResolvedValue {
  value: unknown;
  /** The context that set the value; undefined for a built-in default. */
  from: SettingsOwner | undefined;
}

/** Inherited settings: a property set in a context wins over its parents'; reset falls back to the parent. */
export class SettingsQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  row(kind: string, owner: SettingsOwner): Promise<SettingsRow | null> {
    return this.cache.get(`settings:${kind}:${owner.type}:${owner.id}`, async () => {
      const row = await this.db.prisma.setting.findUnique({
        where: { kind_ownerType_ownerId: { kind, ownerType: owner.type, ownerId: owner.id } },
      });
      return row ? { values: row.values as Record<string, unknown>, sequence: row.sequence, changeDate: row.changeDate } : null;
    });
  }

  /** `chain` runs from the context asked about up to the system. */
  async resolve(kind: string, chain: SettingsOwner[], defaults: Record<string, unknown>): Promise<Map<string, ResolvedValue>> {
    const rows = await Promise.all(chain.map((o) => this.row(kind, o)));
    const out = new Map<string, ResolvedValue>();
    for (const [k, v] of Object.entries(defaults)) out.set(k, { value: v, from: undefined });
    for (let i = chain.length - 1; i >= 0; i--) {
      for (const [k, v] of Object.entries(rows[i]?.values ?? {})) out.set(k, { value: v, from: chain[i] });
    }
    return out;
  }
}

/** The inheritance chain of a context: itself, then its parents up to the system. */
export function settingsChain(target: { type: ContextType; instanceId: string; orgId?: string }): SettingsOwner[] {
  const system: SettingsOwner = { type: "system", id: "" };
  if (target.type === "system") return [system];
  const instance: SettingsOwner = { type: "instance", id: target.instanceId };
  if (target.type === "instance") return [instance, system];
  return [{ type: "org", id: target.orgId ?? "" }, instance, system];
}
