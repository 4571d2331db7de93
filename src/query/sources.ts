import { allProjections, type ProjectionTable } from "../projections/index.js";
import type { Source } from "./cache.js";

export type Table = ProjectionTable;

/** The aggregate types that write a table, its own first. */
type Sources = readonly [own: string, ...others: string[]];

/**
 * For each projection table: the aggregate types of the events its projection handles (`src/projections/`), in
 * the order of its handlers, so its own aggregate first. A cached read names these as its sources, so that an
 * event drops exactly the entries it may have changed. Cascades count: removing an organisation deletes its
 * users, so the user projection handles `org.org.removed` and `user` lists `org`. (The removal of an instance,
 * which takes every row of it, is no table's: src/projections/cascade.ts.) `test/platform/cache-sources.test.ts`
 * checks that each projection writes its own table only.
 */
export const tableSources: Readonly<Record<Table, Sources>> = sourcesOfProjections();

function sourcesOfProjections(): Record<Table, Sources> {
  const out = {} as Record<Table, Sources>;
  for (const p of allProjections) {
    const [own, ...others] = new Set(p.handlers.map((h) => h.event.aggregateType));
    if (own === undefined) throw new Error(`the ${p.table} projection handles no event`);
    out[p.table] = [own, ...others];
  }
  return out;
}

const combined = new Map<string, readonly Source[]>();

/** The sources of a read of these tables, every aggregate of each type (computed once per combination: reads call it on every hit). */
export function readFrom(...tables: Table[]): readonly Source[] {
  const key = tables.join(",");
  let sources = combined.get(key);
  if (!sources) {
    sources = [...new Set(tables.flatMap((t) => tableSources[t]))];
    combined.set(key, sources);
  }
  return sources;
}

/**
 * The sources of a read of one aggregate's own row of `table` (e.g. a user by its ID): that aggregate's
 * events, and every event of the other types that write the table (their cascades name no single row).
 */
export function readRow(table: Table, id: string): readonly Source[] {
  const [own, ...others] = tableSources[table];
  return [{ type: own, id }, ...others];
}
