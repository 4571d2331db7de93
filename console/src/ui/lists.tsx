// The pieces of a list page: the order select and a state filter of its toolbar, the table of a search query's page
// with the query's error above it, a dialog's form with cancel and submit, and a form with one submit button.
import type { ReactNode } from "react";
import { errorOf } from "../api";
import { useT } from "../i18n";
import { messages } from "../i18n/core";
import { ErrorText, type FormError, Status } from "./base";
import { FormErrorText, Select } from "./fields";
import { type Column, DataTable } from "./table";

/** The "query.asc" select: oldest or newest first (`newestFirst` lists that option first). */
export function OrderSelect({
  label,
  oldest,
  newest,
  asc,
  onChange,
  newestFirst,
}: {
  label: string;
  oldest: string;
  newest: string;
  asc: boolean;
  onChange: (asc: boolean) => void;
  newestFirst?: boolean;
}) {
  const options = [
    { value: "asc", label: oldest },
    { value: "desc", label: newest },
  ];
  return (
    <Select
      label={label}
      name="query.asc"
      value={asc ? "asc" : "desc"}
      onChange={(v) => onChange(v === "asc")}
      options={newestFirst ? options.reverse() : options}
    />
  );
}

/** A filter by state: all, active or inactive (the values the request takes for them). */
export function StateSelect({
  label,
  name,
  all,
  value,
  onChange,
  active = "active",
  inactive = "inactive",
}: {
  label: string;
  name: string;
  all: string;
  value: string;
  onChange: (v: string) => void;
  active?: string;
  inactive?: string;
}) {
  const c = useT(messages);
  return (
    <Select
      label={label}
      name={name}
      value={value}
      onChange={onChange}
      options={[
        { value: "", label: all },
        { value: active, label: c("active") },
        { value: inactive, label: c("inactive") },
      ]}
    />
  );
}

/** What a list page's table needs of its search query (connect-query's result). */
export interface ListQuery<T> {
  data?: { result: T[]; details?: { totalResult: bigint } };
  isError: boolean;
  error: unknown;
  isFetching: boolean;
}

/**
 * The page of a search query as a table: the query's error (and `error`, that of an action on its rows) above it,
 * its paging from `paging(total)`.
 */
export function QueryTable<T>({
  list,
  error,
  paging,
  ...table
}: {
  list: ListQuery<T>;
  error?: FormError;
  paging: (total: bigint | undefined) => { offset: number; limit: number; total: number; onPage: (offset: number) => void };
  caption: string;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  sort?: { column: string; asc: boolean };
  onSort?: (column: string, asc: boolean) => void;
}) {
  return (
    <>
      {list.isError && <ErrorText error={errorOf(list.error)} />}
      {error !== undefined && <ErrorText error={error} />}
      <DataTable {...table} rows={list.data?.result} paging={paging(list.data?.details?.totalResult)} loading={list.isFetching} />
    </>
  );
}

/** A form in a dialog: its error above (unless a field of `names` shows it), then cancel and submit buttons. */
export function DialogForm({
  error,
  names,
  busy,
  submitLabel,
  onCancel,
  onSubmit,
  children,
}: {
  error: FormError;
  names: string[];
  busy: boolean;
  submitLabel?: string;
  onCancel: () => void;
  onSubmit: () => unknown;
  children: ReactNode;
}) {
  const c = useT(messages);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    >
      <FormErrorText error={error} names={names} />
      {children}
      <div className="buttons">
        <button type="button" onClick={onCancel}>
          {c("cancel")}
        </button>
        <button type="submit" className="primary" disabled={busy}>
          {submitLabel ?? c("save")}
        </button>
      </div>
    </form>
  );
}

/**
 * A form with one submit button (one that adds an item, or saves one): `head` first, its error (unless a field of `names` shows it), its fields, the
 * submit button and the status line after it worked.
 */
export function SubmitForm({
  head,
  error,
  names,
  busy,
  submitLabel,
  status,
  onSubmit,
  children,
}: {
  head?: ReactNode;
  error: FormError;
  names: string[];
  busy: boolean;
  submitLabel: string;
  status: string;
  onSubmit: () => unknown;
  children: ReactNode;
}) {
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    >
      {head}
      <FormErrorText error={error} names={names} />
      {children}
      <div className="buttons">
        <button type="submit" className="primary" disabled={busy}>
          {submitLabel}
        </button>
      </div>
      <Status text={status} />
    </form>
  );
}
