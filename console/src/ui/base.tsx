// Page frame, links and status lines: the pieces every screen of the console has.
import { type ReactNode, useEffect, useId } from "react";
import { errorOf } from "../api";
import { useT } from "../i18n";
import { messages } from "../i18n/core";
import { navigate } from "../router";

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

/** Links to the parts of an item, the current one marked for screen readers too. */
export function Tabs({ label, tabs, current }: { label: string; tabs: { to: string; label: string }[]; current: string }) {
  return (
    <nav aria-label={label} className="toolbar">
      {tabs.map((tab) => (
        <a
          key={tab.to}
          href={`/ui/console${tab.to}`}
          aria-current={tab.to === current ? "page" : undefined}
          className={tab.to === current ? "current" : undefined}
          onClick={(e) => {
            if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault();
            navigate(tab.to);
          }}
        >
          {tab.to === current ? <strong>{tab.label}</strong> : tab.label}
        </a>
      ))}
    </nav>
  );
}

/** A section of a page: a card with its h2. */
export function Card({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  const h = useId();
  return (
    <section className="card" aria-labelledby={id ?? h}>
      <h2 id={id ?? h}>{title}</h2>
      {children}
    </section>
  );
}

/** A paragraph with a link back (to a section's list), "Back" unless `label` says otherwise. */
export function BackLink({ to, label }: { to: string; label?: string }) {
  const t = useT(messages);
  return (
    <p>
      <Link to={to}>{label ?? t("back")}</Link>
    </p>
  );
}

/** An item that could not be read: the server's error (or "not found") and a link back, under the section's title. */
export function Missing({ title, error, back, backLabel }: { title: string; error: unknown; back: string; backLabel?: string }) {
  const t = useT(messages);
  return (
    <Page title={title}>
      <ErrorText error={error ? errorOf(error) : { message: t("notFound") }} />
      <BackLink to={back} label={backLabel} />
    </Page>
  );
}
