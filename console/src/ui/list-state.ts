// The state of a list page: its page (offset, limit), its sorting and filters that go back to the first page when
// they change, and a search text that is sent once the user stopped typing.
import { useEffect, useState } from "react";

export const PAGE_SIZE = 20;

/** The value once it has not changed for a moment (a search field's text, not one request per key). */
export function useDebounced<T>(value: T, ms = 300): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setV(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return v;
}

export interface Sort {
  column: string;
  asc: boolean;
}

/**
 * Offset and sorting of a list: `query` for the request, `table(total)` for DataTable's sort and paging props, and
 * `reset(setter)` for a filter's setter that goes back to the first page.
 */
export function useListState(initialSort: Sort = { column: "", asc: false }, limit = PAGE_SIZE) {
  const [offset, setOffset] = useState(0);
  const [sort, setSort] = useState(initialSort);
  return {
    offset,
    setOffset,
    sort,
    limit,
    query: { offset: BigInt(offset), limit, asc: sort.asc },
    reset:
      <V>(set: (v: V) => void) =>
      (v: V) => {
        set(v);
        setOffset(0);
      },
    onSort: (column: string, asc: boolean) => {
      setSort({ column, asc });
      setOffset(0);
    },
    paging: (total: bigint | number | undefined) => ({ offset, limit, total: Number(total ?? 0), onPage: setOffset }),
  };
}

/** Paging of a small list: offset and limit for the request (newest first), and DataTable's paging. */
export function usePaging(limit = PAGE_SIZE) {
  const [offset, setOffset] = useState(0);
  return {
    query: { offset: BigInt(offset), limit, asc: false },
    paging: (total: bigint | undefined) => ({ offset, limit, total: Number(total ?? 0n), onPage: setOffset }),
  };
}
