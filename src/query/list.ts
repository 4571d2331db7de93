import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListDetailsSchema, TextFilterMethod, type ListDetails, type ListQuery } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";

export const DEFAULT_LIMIT = 100;

/** ListQuery as the specification has it: limit 100 by default (the validator refuses above 1000), descending by default. */
export function listWindow(q: ListQuery | undefined): { skip: number; take: number; order: "asc" | "desc" } {
  return { skip: Number(q?.offset ?? 0n), take: q?.limit || DEFAULT_LIMIT, order: q?.asc ? "asc" : "desc" };
}

/** A Prisma string filter for a TextFilterMethod. */
export function textFilter(value: string, method: TextFilterMethod) {
  const insensitive = { mode: "insensitive" as const };
  switch (method) {
    case TextFilterMethod.EQUALS_IGNORE_CASE:
      return { equals: value, ...insensitive };
    case TextFilterMethod.STARTS_WITH:
      return { startsWith: value };
    case TextFilterMethod.STARTS_WITH_IGNORE_CASE:
      return { startsWith: value, ...insensitive };
    case TextFilterMethod.CONTAINS:
      return { contains: value };
    case TextFilterMethod.CONTAINS_IGNORE_CASE:
      return { contains: value, ...insensitive };
    case TextFilterMethod.ENDS_WITH:
      return { endsWith: value };
    case TextFilterMethod.ENDS_WITH_IGNORE_CASE:
      return { endsWith: value, ...insensitive };
    default:
      return { equals: value };
  }
}

/** The latest event the projections have reduced (they are updated in its transaction). */
export function projectionState(db: Database, cache: ProjectionCache): Promise<{ position: bigint; at: Date | undefined }> {
  return cache.get("projection-state", async () => {
    const e = await db.prisma.event.findFirst({ orderBy: { position: "desc" }, select: { position: true, createdAt: true } });
    return { position: e?.position ?? 0n, at: e?.createdAt };
  });
}

export function listDetails(args: { take: number; skip: number; returned: number; total: number; state: { position: bigint; at: Date | undefined } }): ListDetails {
  return create(ListDetailsSchema, {
    appliedLimit: args.take,
    endOfList: args.skip + args.returned >= args.total,
    totalResult: BigInt(args.total),
    processedSequence: args.state.position,
    ...(args.state.at ? { timestamp: timestampFromDate(args.state.at) } : {}),
  });
}

/**
 * One page of a search: the rows and the total of the same filter, and ListDetails that say so truthfully.
 * `fetch` gets the window (offset, limit, direction) and returns the page query and a function that counts.
 * The total of a filter is kept until the next committed event (counting a large table is the costly half of
 * paging through it); `countKey` names the filter, e.g. the model and its where clause.
 */
export async function searchPage<R>(
  db: Database,
  cache: ProjectionCache,
  query: ListQuery | undefined,
  countKey: string,
  fetch: (w: { skip: number; take: number; order: "asc" | "desc" }) => [Promise<R[]>, () => Promise<number>],
): Promise<{ rows: R[]; details: ListDetails }> {
  const window = listWindow(query);
  const [rowsQuery, count] = fetch(window);
  const [rows, total, state] = await Promise.all([rowsQuery, cache.get(`count:${countKey}`, count), projectionState(db, cache)]);
  return { rows, details: listDetails({ take: window.take, skip: window.skip, returned: rows.length, total, state }) };
}

/** The name of a search's filter for the count cache: the model and its where clause. */
export const countKey = (model: string, where: unknown) => `${model}:${JSON.stringify(where)}`;
