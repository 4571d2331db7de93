// The console's few building blocks, on native elements: <dialog> for confirmations (focus and Esc for free),
// <table> with a caption and sortable column headers, labelled fields whose error the server named.
import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import type { errorOf } from "../api";
import { navigate } from "../router";
import { messages } from "../i18n/core";
import { useT } from "../i18n";

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  useEffect(() => {
    document.title = title;
  }, [title]);
  return (
    <>
      <div className="page-head">
        <h1>{title}</h1>
        {actions && <div className="page-actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}

/** A server error for a form: the field it names is shown at that field; the rest above the form. */
export type FormError = ReturnType<typeof errorOf> | undefined;

export function ErrorText({ error, fields = [] }: { error: FormError; fields?: string[] }) {
  const t = useT(messages);
  if (!error || (error.field && fields.includes(error.field))) return null;
  return (
    <div role="alert" className="error-box">
      <strong>{t("errorTitle")}</strong> {error.message}
    </div>
  );
}

type InputProps = Omit<React.InputHTMLAttributes<HTMLInputElement>, "name"> & { name: string };

/** A labelled input; `name` is the request's field path, so that an error naming it shows here. */
export function Field({ label, error, hint, ...input }: InputProps & { label: string; error?: FormError; hint?: string }) {
  const id = useId();
  const mine = error?.field === input.name ? error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-invalid={mine ? true : undefined} aria-describedby={mine || hint ? `${id}-d` : undefined} {...input} />
      {(mine || hint) && (
        <div id={`${id}-d`} className={mine ? "field-error" : "hint"}>
          {mine ?? hint}
        </div>
      )}
    </div>
  );
}

export function Select({
  label,
  name,
  value,
  onChange,
  options,
  error,
}: {
  label: string;
  name: string;
  value: string;
  onChange: (v: string) => void;
  options: { value: string; label: string }[];
  error?: FormError;
}) {
  const id = useId();
  const mine = error?.field === name ? error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={mine ? `${id}-d` : undefined}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {mine && (
        <div id={`${id}-d`} className="field-error">
          {mine}
        </div>
      )}
    </div>
  );
}

export function Checkbox({ label, name, checked, onChange }: { label: string; name: string; checked: boolean; onChange: (v: boolean) => void }) {
  const id = useId();
  return (
    <div className="field field-check">
      <input id={id} type="checkbox" name={name} checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** A modal on the native <dialog>: opened while `open`, closed by Esc or its buttons. */
export function Modal({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={id} onClose={onClose}>
      <h2 id={id}>{title}</h2>
      {open && children}
    </dialog>
  );
}

/** A button that asks before it acts (anything destructive). */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  className = "danger",
}: {
  label: string;
  question: string;
  onConfirm: () => unknown;
  className?: string;
}) {
  const t = useT(messages);
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)}>
        {label}
      </button>
      <Modal title={t("confirmTitle")} open={open} onClose={() => setOpen(false)}>
        <p>{question}</p>
        <div className="buttons">
          <button type="button" onClick={() => setOpen(false)}>
            {t("cancel")}
          </button>
          <button
            type="button"
            className="danger"
            onClick={async () => {
              setOpen(false);
              await onConfirm();
            }}
          >
            {label}
          </button>
        </div>
      </Modal>
    </>
  );
}

/** A secret, key or token the server returns once. */
export function SecretModal({ title, value, onClose }: { title?: string; value: string | undefined; onClose: () => void }) {
  const t = useT(messages);
  const [copied, setCopied] = useState(false);
  return (
    <Modal title={title ?? t("secretTitle")} open={value !== undefined} onClose={onClose}>
      <p>{t("shownOnce")}</p>
      <output className="secret" data-testid="secret">
        {value}
      </output>
      <div className="buttons">
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(value ?? "").catch(() => {});
            setCopied(true);
          }}
        >
          {t("copy")}
        </button>
        <button type="button" onClick={onClose}>
          {t("close")}
        </button>
      </div>
      <p role="status">{copied ? t("copied") : ""}</p>
    </Modal>
  );
}

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

/** A link inside the console that navigates without a reload. */
export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  return (
    <a
      href={`/ui/console${to}`}
      className={className}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** A polite status line for what just happened ("Saved."). */
export function Status({ text }: { text: string }) {
  return (
    <p role="status" className="status">
      {text}
    </p>
  );
}
