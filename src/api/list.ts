import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListDetailsSchema, TextFilterMethod, type ListDetails, type ListQuery } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { Criterion, ListWindow, SearchPage, SearchRequest, TextCriterion, TextMatch } from "../query/list.js";

// The searches' messages in and out: ListQuery, the filters and sorting field of a search request, ListDetails.

export const DEFAULT_LIMIT = 100;

/** ListQuery as the specification has it: limit 100 by default (the validator refuses above 1000), descending by default. */
export function listWindow(q: ListQuery | undefined): ListWindow {
  return { skip: Number(q?.offset ?? 0n), take: q?.limit || DEFAULT_LIMIT, order: q?.asc ? "asc" : "desc" };
}

/** ListDetails that say truthfully what a page holds. */
export function listDetails(page: SearchPage<unknown>): ListDetails {
  return create(ListDetailsSchema, {
    appliedLimit: page.take,
    endOfList: page.skip + page.rows.length >= page.total,
    totalResult: BigInt(page.total),
    processedSequence: page.state.position,
    ...(page.state.at ? { timestamp: timestampFromDate(page.state.at) } : {}),
  });
}

const textMatches: Record<TextFilterMethod, TextMatch> = {
  [TextFilterMethod.EQUALS]: "equals",
  [TextFilterMethod.EQUALS_IGNORE_CASE]: "equalsIgnoreCase",
  [TextFilterMethod.STARTS_WITH]: "startsWith",
  [TextFilterMethod.STARTS_WITH_IGNORE_CASE]: "startsWithIgnoreCase",
  [TextFilterMethod.CONTAINS]: "contains",
  [TextFilterMethod.CONTAINS_IGNORE_CASE]: "containsIgnoreCase",
  [TextFilterMethod.ENDS_WITH]: "endsWith",
  [TextFilterMethod.ENDS_WITH_IGNORE_CASE]: "endsWithIgnoreCase",
};

/** A text filter's criterion; a method this server does not know compares for equality. */
export function textCriterion(text: string, method: TextFilterMethod): TextCriterion {
  return { text, match: textMatches[method] ?? "equals" };
}

/** A search request's filter: its criterion is the oneof `filter`, unset when the client sent none. */
export interface ProtoFilter {
  filter: { case: string | undefined; value?: unknown };
}

/** The oneof of a filter that is set. */
export type SetFilter<P extends ProtoFilter> = Exclude<P["filter"], { case: undefined }>;

/**
 * The criteria of a request's filters, each read by `criterionOf` with its path in the request (`filters[2]`)
 * for errors. A filter without a criterion (unset, or of a case the search does not read) restricts nothing.
 */
export function criteriaOf<P extends ProtoFilter, F>(filters: P[], criterionOf: (f: SetFilter<P>, field: string) => F | undefined): F[] {
  return filters.flatMap((f, i) => {
    const c = f.filter.case === undefined ? undefined : criterionOf(f.filter as SetFilter<P>, `filters[${i}]`);
    return c === undefined ? [] : [c];
  });
}

/** A search request in the query's terms: its criteria, and the sorting field by the resource's name for it (`sorts`). */
export function searchRequestOf<P extends ProtoFilter, F extends Criterion, N extends number = never, S extends string = never>(
  req: { filters: P[]; sortingColumn?: N },
  criterionOf: (f: SetFilter<P>, field: string) => F | undefined,
  sorts?: Partial<Record<N, S>>,
): SearchRequest<F, S> {
  return { filters: criteriaOf(req.filters, criterionOf), sort: req.sortingColumn === undefined ? undefined : sorts?.[req.sortingColumn] };
}
