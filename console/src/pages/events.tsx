// The audit log (EventService, instance-wide): the instance's events newest first, filtered by what SearchEvents offers
// (aggregate and event type from ListEventTypes, aggregate, editor, owner, time range), each event's redacted payload
// in a dialog. The filters live in the URL's query, so a filtered view can be linked and the browser's Back works.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { Fragment, useId, useMemo, useState } from "react";
import { type Event, type EventSearchFilterSchema, EventService } from "../../../gen/svc/resources/event/v3alpha/event_service_pb.js";
import { OrganizationService } from "../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { useAccess } from "../access";
import { errorOf } from "../api";
import type { AreaProps } from "../areas";
import { type Language, useLanguage, useT } from "../i18n";
import { messages as core } from "../i18n/core";
import { messages } from "../i18n/events";
import { match, navigate, useLocation } from "../router";
import { type Column, DataTable, ErrorText, Field, Link, Modal, Page, Select } from "../ui";

const PAGE = 50;
/** SearchEvents counts exactly up to this many. */
const COUNT_CAP = 10_000;

const FILTER_KEYS = ["aggregateType", "eventType", "aggregateId", "editor", "owner", "since", "until"] as const;
type FilterKey = (typeof FILTER_KEYS)[number];
type Filters = Record<FilterKey, string>;

function filtersOf(query: URLSearchParams): Filters {
  return Object.fromEntries(FILTER_KEYS.map((k) => [k, query.get(k) ?? ""])) as Filters;
}

function hrefOf(f: Partial<Filters>): string {
  const q = new URLSearchParams();
  for (const k of FILTER_KEYS) {
    const v = f[k]?.trim();
    if (v) q.set(k, v);
  }
  const s = q.toString();
  return s ? `/events?${s}` : "/events";
}

/** A datetime-local value ("2025-05-01T10:00") as a Date in the browser's time zone; the end of its minute for `until`. */
function dateOf(value: string, end = false): Date | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return undefined;
  return end && value.length <= 16 ? new Date(d.getTime() + 59_999) : d;
}

function requestFilters(f: Filters): MessageInitShape<typeof EventSearchFilterSchema>[] {
  const out: MessageInitShape<typeof EventSearchFilterSchema>[] = [];
  if (f.aggregateType) out.push({ filter: { case: "aggregateTypes", value: { types: [f.aggregateType] } } });
  if (f.eventType) out.push({ filter: { case: "eventTypes", value: { types: [f.eventType] } } });
  if (f.aggregateId) out.push({ filter: { case: "aggregateId", value: f.aggregateId } });
  if (f.editor) out.push({ filter: { case: "editorUserId", value: f.editor } });
  if (f.owner) out.push({ filter: { case: "resourceOwner", value: f.owner } });
  const since = dateOf(f.since);
  const until = dateOf(f.until, true);
  if (since || until) {
    out.push({ filter: { case: "creationDate", value: { since: since && timestampFromDate(since), until: until && timestampFromDate(until) } } });
  }
  return out;
}

/** A long dotted or slashed token (event type, aggregate ID, editor) that may wrap after its separators. */
function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?<=[./@_])/);
  return (
    <>
      {parts.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {p}
        </Fragment>
      ))}
    </>
  );
}

/** Date and time to the second: the order of events within a minute matters here. */
function formatWhen(lang: Language, e: Event): string {
  return e.creationDate ? new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "medium" }).format(timestampDate(e.creationDate)) : "";
}

export default function Events({ path }: AreaProps) {
  const t = useT(messages);
  const c = useT(core);
  const { query } = useLocation();
  if (!match("/", path)) {
    return (
      <Page title={c("notFound")}>
        <p>
          <Link to="/events">{t("backToLog")}</Link>
        </p>
      </Page>
    );
  }
  const filters = filtersOf(query);
  const key = hrefOf(filters);
  return (
    <Page title={t("title")}>
      <p>{t("intro")}</p>
      <FilterForm key={`form:${key}`} applied={filters} />
      <EventList key={`list:${key}`} filters={filters} />
    </Page>
  );
}

/** Every event type and aggregate type (ListEventTypes), and the organisations' names by ID for the owner picker. */
function useCatalogues() {
  const access = useAccess();
  const types = useQuery(EventService.method.listEventTypes, {});
  const orgs = useQuery(OrganizationService.method.searchOrganizations, { query: { limit: 1000, asc: true } }, { enabled: access.everywhere("org.read") });
  const orgNames = useMemo(() => new Map((orgs.data?.result ?? []).map((o) => [o.details?.id ?? "", o.name])), [orgs.data]);
  return { eventTypes: types.data?.eventTypes ?? [], aggregateTypes: types.data?.aggregateTypes ?? [], orgNames, error: types.error };
}

function FilterForm({ applied }: { applied: Filters }) {
  const t = useT(messages);
  const c = useT(core);
  const id = useId();
  const { eventTypes, aggregateTypes, orgNames, error } = useCatalogues();
  const [draft, setDraft] = useState<Filters>(applied);
  const set = (k: FilterKey) => (v: string) => setDraft((old) => ({ ...old, [k]: v }));
  const prefix = `${draft.aggregateType}.`;
  const typesOfAggregate = draft.aggregateType ? eventTypes.filter((e) => e.startsWith(prefix)) : eventTypes;
  const offeredTypes = typesOfAggregate.length ? typesOfAggregate : eventTypes;
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{t("filters")}</h2>
      <ErrorText error={error ? errorOf(error) : undefined} />
      <search>
        <form
          aria-describedby={`${id}-hint`}
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            navigate(hrefOf(draft));
          }}
        >
          <div className="toolbar">
            <Select
              label={t("aggregateType")}
              name="filters.aggregate_types.types"
              value={draft.aggregateType}
              onChange={set("aggregateType")}
              options={[{ value: "", label: t("anyAggregateType") }, ...aggregateTypes.map((a) => ({ value: a, label: a }))]}
            />
            <Field
              label={t("eventType")}
              name="filters.event_types.types"
              list={`${id}-types`}
              value={draft.eventType}
              onChange={(e) => set("eventType")(e.target.value)}
              autoComplete="off"
            />
            <datalist id={`${id}-types`}>
              {offeredTypes.map((e) => (
                <option key={e} value={e} />
              ))}
            </datalist>
            <Field
              label={t("aggregateId")}
              name="filters.aggregate_id"
              value={draft.aggregateId}
              onChange={(e) => set("aggregateId")(e.target.value)}
              autoComplete="off"
            />
          </div>
          <div className="toolbar">
            <Field label={t("editor")} name="filters.editor_user_id" value={draft.editor} onChange={(e) => set("editor")(e.target.value)} autoComplete="off" />
            <Field
              label={t("resourceOwner")}
              name="filters.resource_owner"
              list={`${id}-owners`}
              value={draft.owner}
              onChange={(e) => set("owner")(e.target.value)}
              autoComplete="off"
            />
            <datalist id={`${id}-owners`}>
              {[...orgNames].map(([orgId, name]) => (
                <option key={orgId} value={orgId} label={name} />
              ))}
            </datalist>
            <Field
              label={t("since")}
              name="filters.creation_date.since"
              type="datetime-local"
              step="1"
              value={draft.since}
              onChange={(e) => set("since")(e.target.value)}
            />
            <Field
              label={t("until")}
              name="filters.creation_date.until"
              type="datetime-local"
              step="1"
              value={draft.until}
              onChange={(e) => set("until")(e.target.value)}
            />
          </div>
          <p className="hint" id={`${id}-hint`}>
            {t("filtersHint")}
          </p>
          <div className="buttons">
            <button type="submit" className="primary">
              {c("search")}
            </button>
            <button
              type="button"
              onClick={() => {
                setDraft(filtersOf(new URLSearchParams()));
                navigate("/events");
              }}
            >
              {t("resetFilters")}
            </button>
          </div>
        </form>
      </search>
    </section>
  );
}

function EventList({ filters }: { filters: Filters }) {
  const t = useT(messages);
  const c = useT(core);
  const lang = useLanguage();
  const { orgNames } = useCatalogues();
  const [offset, setOffset] = useState(0);
  const [asc, setAsc] = useState(false);
  const [shown, setShown] = useState<Event | undefined>(undefined);
  const list = useQuery(
    EventService.method.searchEvents,
    { query: { offset: BigInt(offset), limit: PAGE, asc }, filters: requestFilters(filters) },
    { placeholderData: keepPreviousData },
  );
  const total = Number(list.data?.details?.totalResult ?? 0);
  const ownerText = (id: string) => (orgNames.get(id) ? `${orgNames.get(id)} (${id})` : id);
  const columns: Column<Event>[] = [
    { key: "when", label: t("when"), sort: "position", render: (e) => formatWhen(lang, e) },
    { key: "type", label: t("eventType"), render: (e) => <Breakable text={e.type} /> },
    {
      key: "aggregate",
      label: t("aggregate"),
      render: (e) => (
        <>
          {e.aggregateType}
          <br />
          <span className="hint">
            <Breakable text={e.aggregateId} />
          </span>
        </>
      ),
    },
    { key: "editor", label: t("editor"), render: (e) => <Breakable text={e.editorUserId} /> },
    {
      key: "details",
      label: c("details"),
      render: (e) => (
        <button type="button" aria-label={t("showEventNamed", { type: e.type, when: formatWhen(lang, e) })} onClick={() => setShown(e)}>
          {t("showEvent")}
        </button>
      ),
    },
  ];
  return (
    <section className="card" aria-labelledby="events-h">
      <h2 id="events-h">{t("events")}</h2>
      <div className="toolbar">
        <button type="button" onClick={() => void list.refetch()} disabled={list.isFetching}>
          {t("refresh")}
        </button>
      </div>
      <ErrorText error={list.error ? errorOf(list.error) : undefined} />
      {total >= COUNT_CAP && <p className="hint">{t("countCapped", { n: new Intl.NumberFormat(lang).format(COUNT_CAP) })}</p>}
      <DataTable
        caption={asc ? t("captionOldest") : t("captionNewest")}
        columns={columns}
        rows={list.data?.result}
        rowKey={(e) => e.position.toString()}
        sort={{ column: "position", asc }}
        onSort={(_, a) => {
          setAsc(a);
          setOffset(0);
        }}
        paging={{ offset, limit: PAGE, total, onPage: setOffset }}
        loading={list.isFetching}
      />
      <Modal title={shown ? t("eventTitle", { type: shown.type }) : t("event")} open={shown !== undefined} onClose={() => setShown(undefined)}>
        {shown && <EventDetail event={shown} ownerText={ownerText} onClose={() => setShown(undefined)} />}
      </Modal>
    </section>
  );
}

function EventDetail({ event: e, ownerText, onClose }: { event: Event; ownerText: (id: string) => string; onClose: () => void }) {
  const t = useT(messages);
  const c = useT(core);
  const lang = useLanguage();
  const go = (f: Partial<Filters>) => {
    onClose();
    navigate(hrefOf(f));
  };
  return (
    <>
      <dl className="props">
        <dt>{t("when")}</dt>
        <dd>{formatWhen(lang, e)}</dd>
        <dt>{t("eventType")}</dt>
        <dd>{e.type}</dd>
        <dt>{t("aggregateType")}</dt>
        <dd>{e.aggregateType}</dd>
        <dt>{t("aggregateId")}</dt>
        <dd>{e.aggregateId}</dd>
        <dt>{t("sequence")}</dt>
        <dd>{e.sequence.toString()}</dd>
        <dt>{t("position")}</dt>
        <dd>{e.position.toString()}</dd>
        <dt>{t("resourceOwner")}</dt>
        <dd>{ownerText(e.resourceOwner)}</dd>
        <dt>{t("editor")}</dt>
        <dd>{e.editorUserId}</dd>
      </dl>
      <h3>{t("payload")}</h3>
      <p className="hint">{t("payloadRedacted")}</p>
      <pre className="json">{JSON.stringify(e.payload ?? {}, null, 2)}</pre>
      <div className="buttons">
        <button type="button" onClick={() => go({ aggregateType: e.aggregateType, aggregateId: e.aggregateId })}>
          {t("sameAggregate")}
        </button>
        {e.editorUserId && (
          <button type="button" onClick={() => go({ editor: e.editorUserId })}>
            {t("sameEditor")}
          </button>
        )}
        {e.resourceOwner && (
          <button type="button" onClick={() => go({ owner: e.resourceOwner })}>
            {t("sameOwner")}
          </button>
        )}
        <button type="button" onClick={() => go({ eventType: e.type })}>
          {t("sameType")}
        </button>
        <button type="button" onClick={onClose}>
          {c("close")}
        </button>
      </div>
    </>
  );
}
