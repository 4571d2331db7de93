// A table of one page of results, with a caption, sortable column headers and paging.
import type { ReactNode } from "react";
import { useT } from "../i18n";
import { messages } from "../i18n/core";

export interface Column<T> {
  key: string;
  label: string;
  render: (row: T) => ReactNode;
  /** Sortable: the value the page sends as its sorting column. */
  sort?: string;
}

/** A table of one page of results, with sortable column headers and paging. */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  sort,
  onSort,
  paging,
  loading,
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[] | undefined;
  rowKey: (row: T) => string;
  sort?: { column: string; asc: boolean };
  onSort?: (column: string, asc: boolean) => void;
  paging?: { offset: number; limit: number; total: number; onPage: (offset: number) => void };
  loading?: boolean;
}) {
  const t = useT(messages);
  return (
    <div className="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => {
              const current = sort && c.sort === sort.column;
              return (
                <th key={c.key} scope="col" aria-sort={current ? (sort.asc ? "ascending" : "descending") : undefined}>
                  {c.sort && onSort ? (
                    <button type="button" className="sort" onClick={() => onSort(c.sort!, current ? !sort.asc : true)}>
                      {c.label}
                      <span aria-hidden="true">{current ? (sort.asc ? " ▲" : " ▼") : ""}</span>
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody aria-busy={loading || undefined}>
          {rows?.map((r) => (
            <tr key={rowKey(r)}>
              {columns.map((c) => (
                <td key={c.key}>{c.render(r)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {loading && !rows && <p role="status">{t("loading")}</p>}
      {rows && rows.length === 0 && <p>{t("noResults")}</p>}
      {paging && paging.total > 0 && (
        <nav className="pager" aria-label={caption}>
          <span>{t("pageOf", { from: paging.offset + 1, to: Math.min(paging.offset + paging.limit, paging.total), total: paging.total })}</span>
          <button type="button" disabled={paging.offset === 0} onClick={() => paging.onPage(Math.max(0, paging.offset - paging.limit))}>
            {t("previous")}
          </button>
          <button type="button" disabled={paging.offset + paging.limit >= paging.total} onClick={() => paging.onPage(paging.offset + paging.limit)}>
            {t("next")}
          </button>
        </nav>
      )}
    </div>
  );
}
