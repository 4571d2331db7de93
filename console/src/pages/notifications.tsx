// SMTP and SMS providers of the instance the console runs in (NotificationProviderService): search, create, change,
// activate/deactivate, delete, and a test message through a provider. The service acts in the Host header's
// instance: the console's own.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useState } from "react";
import { type GetSMSProvider, type GetSMTPProvider, ProviderFieldName, SMTPTLSMode } from "../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { NotificationProviderService } from "../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { State, TextFilterMethod } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useAccess } from "../access";
import { errorOf } from "../api";
import type { AreaProps } from "../areas";
import { formatDate, useLanguage, useT } from "../i18n";
import { messages as coreMessages } from "../i18n/core";
import { messages } from "../i18n/notifications";
import { match, navigate } from "../router";
import { Checkbox, type Column, ConfirmButton, DataTable, ErrorText, Field, type FormError, Link, Page, SecretModal, Select, Status } from "../ui";

const PAGE = 20;
const S = NotificationProviderService.method;

/** A form's error and status line, and a runner that fills them. */
function useForm() {
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const run = async (fn: () => Promise<unknown>, done: string) => {
    setError(undefined);
    setStatus("");
    try {
      await fn();
      setStatus(done);
      return true;
    } catch (err) {
      setError(errorOf(err));
      return false;
    }
  };
  return { error, status, run };
}

function usePerms() {
  const access = useAccess();
  return { write: access.everywhere("notification.provider.write"), del: access.everywhere("notification.provider.delete") };
}

export default function Notifications({ path }: AreaProps) {
  let m = match("/:kind/new", path);
  if (m?.kind === "smtp") return <SmtpCreate />;
  if (m?.kind === "sms") return <SmsCreate />;
  m = match("/:kind/:id", path);
  if (m?.kind === "smtp") return <SmtpItem id={m.id!} />;
  if (m?.kind === "sms") return <SmsItem id={m.id!} />;
  return <ProviderLists />;
}

function ProviderLists() {
  const t = useT(messages);
  return (
    <Page title={t("title")}>
      <p>{t("intro")}</p>
      <ProviderList kind="smtp" />
      <ProviderList kind="sms" />
    </Page>
  );
}

const sortColumns: Record<string, ProviderFieldName> = {
  description: ProviderFieldName.DESCRIPTION,
  changed: ProviderFieldName.CHANGE_DATE,
  id: ProviderFieldName.ID,
};

type Row = GetSMTPProvider | GetSMSProvider;

type CoreT = (key: keyof (typeof coreMessages)["en"], values?: Record<string, string | number>) => string;

function stateText(c: CoreT, s: State | undefined) {
  return s === State.EFFECTIVE_STATE_ACTIVE ? c("active") : c("inactive");
}

function ProviderList({ kind }: { kind: "smtp" | "sms" }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const lang = useLanguage();
  const perms = usePerms();
  const [text, setText] = useState("");
  const [state, setState] = useState("");
  const [sort, setSort] = useState({ column: "", asc: false });
  const [offset, setOffset] = useState(0);
  const filters = [
    ...(text.trim() ? [{ filter: { case: "description" as const, value: { description: text.trim(), method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : []),
    ...(state
      ? [{ filter: { case: "state" as const, value: { state: state === "active" ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE } } }]
      : []),
  ];
  const request = {
    query: { offset: BigInt(offset), limit: PAGE, asc: sort.asc },
    sortingColumn: sortColumns[sort.column] ?? ProviderFieldName.UNSPECIFIED,
    filters,
  };
  const smtp = useQuery(S.searchSMTPProviders, request, { enabled: kind === "smtp" });
  const sms = useQuery(S.searchSMSProviders, request, { enabled: kind === "sms" });
  const list = kind === "smtp" ? smtp : sms;
  const rows: Row[] | undefined = kind === "smtp" ? smtp.data?.result : sms.data?.result;
  const columns: Column<Row>[] = [
    {
      key: "description",
      label: t("description"),
      sort: "description",
      render: (r) => <Link to={`/notifications/${kind}/${r.details?.id ?? ""}`}>{r.provider?.description || t("noDescription")}</Link>,
    },
    kind === "smtp"
      ? { key: "host", label: t("host"), render: (r) => (r as GetSMTPProvider).provider?.host }
      : {
          key: "type",
          label: t("type"),
          render: (r) => ((r as GetSMSProvider).provider?.providerType.case === "twilio" ? t("typeTwilio") : t("typeHttp")),
        },
    kind === "smtp"
      ? { key: "sender", label: t("sender"), render: (r) => (r as GetSMTPProvider).provider?.senderAddress }
      : {
          key: "target",
          label: t("url"),
          render: (r) => {
            const p = (r as GetSMSProvider).provider?.providerType;
            return p?.case === "http" ? p.value.url : p?.case === "twilio" ? p.value.baseUrl || "https://api.twilio.com" : "";
          },
        },
    { key: "state", label: c("state"), render: (r) => stateText(c, r.state) },
    { key: "id", label: c("id"), sort: "id", render: (r) => r.details?.id },
    {
      key: "changed",
      label: c("changed"),
      sort: "changed",
      render: (r) => formatDate(lang, r.details?.changeDate ? timestampDate(r.details.changeDate) : undefined),
    },
  ];
  return (
    <section className="card">
      <h2>{kind === "smtp" ? t("smtpSection") : t("smsSection")}</h2>
      <search className="toolbar">
        <Field
          label={t("searchDescription")}
          name="filters.description"
          type="search"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setOffset(0);
          }}
        />
        <Select
          label={t("stateFilter")}
          name="filters.state"
          value={state}
          onChange={(v) => {
            setState(v);
            setOffset(0);
          }}
          options={[
            { value: "", label: t("stateAll") },
            { value: "active", label: c("active") },
            { value: "inactive", label: c("inactive") },
          ]}
        />
        {perms.write && (
          <div className="field">
            <button type="button" className="primary" onClick={() => navigate(`/notifications/${kind}/new`)}>
              {kind === "smtp" ? t("addSmtp") : t("addSms")}
            </button>
          </div>
        )}
      </search>
      <ErrorText error={list.error ? errorOf(list.error) : undefined} />
      <DataTable
        caption={kind === "smtp" ? t("smtpCaption") : t("smsCaption")}
        columns={columns}
        rows={rows}
        rowKey={(r) => r.details?.id ?? ""}
        sort={sort}
        onSort={(column, asc) => {
          setSort({ column, asc });
          setOffset(0);
        }}
        loading={list.isFetching}
        paging={{ offset, limit: PAGE, total: Number(list.data?.details?.totalResult ?? 0), onPage: setOffset }}
      />
    </section>
  );
}

// ---- SMTP ----

interface SmtpValues {
  description: string;
  host: string;
  port: string;
  tls: SMTPTLSMode;
  user: string;
  password: string;
  removePassword: boolean;
  senderAddress: string;
  senderName: string;
  replyToAddress: string;
}

const SMTP_FIELDS = [
  "provider.description",
  "provider.host",
  "provider.port",
  "provider.tls",
  "provider.user",
  "provider.password",
  "provider.sender_address",
  "provider.sender_name",
  "provider.reply_to_address",
];

function smtpValuesOf(p: GetSMTPProvider | undefined): SmtpValues {
  const v = p?.provider;
  return {
    description: v?.description ?? "",
    host: v?.host ?? "",
    port: v?.port ? String(v.port) : "",
    tls: v?.tls ?? SMTPTLSMode.SMTP_TLS_MODE_UNSPECIFIED,
    user: v?.user ?? "",
    password: "",
    removePassword: false,
    senderAddress: v?.senderAddress ?? "",
    senderName: v?.senderName ?? "",
    replyToAddress: v?.replyToAddress ?? "",
  };
}

function SmtpForm({
  initial,
  editing,
  disabled,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial: SmtpValues;
  editing: boolean;
  disabled: boolean;
  submitLabel: string;
  pending: boolean;
  error: FormError;
  onSubmit: (v: SmtpValues) => void;
}) {
  const t = useT(messages);
  const [v, setV] = useState(initial);
  const set = <K extends keyof SmtpValues>(k: K, value: SmtpValues[K]) => setV((o) => ({ ...o, [k]: value }));
  const tls = v.tls === SMTPTLSMode.SMTP_TLS_MODE_UNSPECIFIED ? SMTPTLSMode.SMTP_TLS_MODE_STARTTLS : v.tls;
  return (
    <form
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        onSubmit(v);
      }}
    >
      <ErrorText error={error} fields={SMTP_FIELDS} />
      <ReadOnly when={disabled}>
        <Field
          label={t("description")}
          name="provider.description"
          value={v.description}
          onChange={(e) => set("description", e.target.value)}
          error={error}
          hint={t("descriptionHint")}
        />
        <Field
          label={t("host")}
          name="provider.host"
          value={v.host}
          onChange={(e) => set("host", e.target.value)}
          error={error}
          hint={t("hostHint")}
          required
          autoCapitalize="none"
          spellCheck={false}
        />
        <Field
          label={t("port")}
          name="provider.port"
          type="number"
          min={0}
          max={65535}
          inputMode="numeric"
          value={v.port}
          onChange={(e) => set("port", e.target.value)}
          error={error}
          hint={t("portHint")}
        />
        <Select
          label={t("tls")}
          name="provider.tls"
          value={String(tls)}
          onChange={(x) => set("tls", Number(x) as SMTPTLSMode)}
          options={[
            { value: String(SMTPTLSMode.SMTP_TLS_MODE_STARTTLS), label: t("tlsStarttls") },
            { value: String(SMTPTLSMode.SMTP_TLS_MODE_TLS), label: t("tlsTls") },
            { value: String(SMTPTLSMode.SMTP_TLS_MODE_NONE), label: t("tlsNone") },
          ]}
          error={error}
        />
        <Field
          label={t("user")}
          name="provider.user"
          value={v.user}
          onChange={(e) => set("user", e.target.value)}
          error={error}
          hint={t("userHint")}
          autoComplete="off"
        />
        <Field
          label={t("password")}
          name="provider.password"
          type="password"
          autoComplete="new-password"
          value={v.password}
          onChange={(e) => set("password", e.target.value)}
          error={error}
          hint={editing ? t("passwordKeepHint") : t("passwordHint")}
          disabled={v.removePassword}
        />
        {editing && (
          <Checkbox label={t("removePassword")} name="provider.password.remove" checked={v.removePassword} onChange={(x) => set("removePassword", x)} />
        )}
        <Field
          label={t("senderAddress")}
          name="provider.sender_address"
          type="email"
          value={v.senderAddress}
          onChange={(e) => set("senderAddress", e.target.value)}
          error={error}
          required
        />
        <Field label={t("senderName")} name="provider.sender_name" value={v.senderName} onChange={(e) => set("senderName", e.target.value)} error={error} />
        <Field
          label={t("replyTo")}
          name="provider.reply_to_address"
          type="email"
          value={v.replyToAddress}
          onChange={(e) => set("replyToAddress", e.target.value)}
          error={error}
        />
        {!disabled && (
          <button type="submit" className="primary" disabled={pending}>
            {submitLabel}
          </button>
        )}
      </ReadOnly>
    </form>
  );
}

const portOf = (s: string) => {
  const n = Number(s.trim() || "0");
  return Number.isInteger(n) && n >= 0 ? n : -1;
};

function SmtpCreate() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const createSmtp = useMutation(S.createSMTPProvider);
  const form = useForm();
  if (!perms.write) return <ProviderLists />;
  return (
    <Page title={t("newSmtp")}>
      <p>
        <Link to="/notifications">{c("back")}</Link>
      </p>
      <section className="card">
        <h2>{t("settings")}</h2>
        <SmtpForm
          initial={smtpValuesOf(undefined)}
          editing={false}
          disabled={false}
          submitLabel={c("create")}
          pending={createSmtp.isPending}
          error={form.error}
          onSubmit={(v) =>
            form.run(async () => {
              const res = await createSmtp.mutateAsync({
                provider: {
                  description: v.description,
                  host: v.host.trim(),
                  port: portOf(v.port),
                  tls: v.tls,
                  user: v.user,
                  password: v.password,
                  senderAddress: v.senderAddress.trim(),
                  senderName: v.senderName,
                  replyToAddress: v.replyToAddress.trim(),
                },
              });
              await qc.invalidateQueries();
              navigate(`/notifications/smtp/${res.details?.id ?? ""}`);
            }, t("created"))
          }
        />
        <Status text={form.status} />
      </section>
    </Page>
  );
}

function SmtpItem({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const got = useQuery(S.getSMTPProvider, { id });
  const patch = useMutation(S.patchSMTPProvider);
  const form = useForm();
  const p = got.data?.provider;
  if (got.isPending) return <p role="status">{c("loading")}</p>;
  if (!p) return <Missing error={got.error} />;
  const title = p.provider?.description || p.provider?.host || id;
  return (
    <Page title={title}>
      <p>
        <Link to="/notifications">{c("back")}</Link>
      </p>
      <ProviderState kind="smtp" id={id} state={p.state} />
      <section className="card">
        <h2>{t("settings")}</h2>
        <SmtpForm
          key={String(p.details?.sequence ?? "")}
          initial={smtpValuesOf(p)}
          editing
          disabled={!perms.write}
          submitLabel={c("save")}
          pending={patch.isPending}
          error={form.error}
          onSubmit={(v) =>
            form.run(async () => {
              await patch.mutateAsync({
                id,
                provider: {
                  description: v.description,
                  host: v.host.trim(),
                  port: portOf(v.port),
                  tls: v.tls,
                  user: v.user,
                  ...(v.removePassword ? { password: "" } : v.password ? { password: v.password } : {}),
                  senderAddress: v.senderAddress.trim(),
                  senderName: v.senderName,
                  replyToAddress: v.replyToAddress.trim(),
                },
              });
              await qc.invalidateQueries();
            }, c("saved"))
          }
        />
        <Status text={form.status} />
      </section>
      {perms.write && <ProviderTest kind="smtp" id={id} />}
      <ProviderDelete kind="smtp" id={id} name={title} />
    </Page>
  );
}

// ---- SMS ----

interface SmsValues {
  description: string;
  type: "http" | "twilio";
  url: string;
  sid: string;
  token: string;
  senderNumber: string;
  baseUrl: string;
}

const SMS_FIELDS = [
  "provider.description",
  "provider.provider_type",
  "provider.http.url",
  "provider.twilio.sid",
  "provider.twilio.token",
  "provider.twilio.sender_number",
  "provider.twilio.base_url",
];

function smsValuesOf(p: GetSMSProvider | undefined): SmsValues {
  const pt = p?.provider?.providerType;
  return {
    description: p?.provider?.description ?? "",
    type: pt?.case === "twilio" ? "twilio" : "http",
    url: pt?.case === "http" ? pt.value.url : "",
    sid: pt?.case === "twilio" ? pt.value.sid : "",
    token: "",
    senderNumber: pt?.case === "twilio" ? pt.value.senderNumber : "",
    baseUrl: pt?.case === "twilio" ? pt.value.baseUrl : "",
  };
}

function smsTypeOf(v: SmsValues) {
  return v.type === "http"
    ? { case: "http" as const, value: { url: v.url.trim() } }
    : { case: "twilio" as const, value: { sid: v.sid.trim(), token: v.token, senderNumber: v.senderNumber.trim(), baseUrl: v.baseUrl.trim() } };
}

function SmsForm({
  initial,
  editing,
  disabled,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial: SmsValues;
  editing: boolean;
  disabled: boolean;
  submitLabel: string;
  pending: boolean;
  error: FormError;
  onSubmit: (v: SmsValues) => void;
}) {
  const t = useT(messages);
  const [v, setV] = useState(initial);
  const set = <K extends keyof SmsValues>(k: K, value: SmsValues[K]) => setV((o) => ({ ...o, [k]: value }));
  return (
    <form
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        onSubmit(v);
      }}
    >
      <ErrorText error={error} fields={SMS_FIELDS} />
      <ReadOnly when={disabled}>
        <Field
          label={t("description")}
          name="provider.description"
          value={v.description}
          onChange={(e) => set("description", e.target.value)}
          error={error}
          hint={t("descriptionHint")}
        />
        <Select
          label={t("type")}
          name="provider.provider_type"
          value={v.type}
          onChange={(x) => set("type", x as "http" | "twilio")}
          options={[
            { value: "http", label: t("typeHttp") },
            { value: "twilio", label: t("typeTwilio") },
          ]}
          error={error}
        />
        {v.type === "http" ? (
          <Field
            label={t("url")}
            name="provider.http.url"
            type="url"
            value={v.url}
            onChange={(e) => set("url", e.target.value)}
            error={error}
            hint={t("urlHint")}
            required
          />
        ) : (
          <>
            <Field
              label={t("sid")}
              name="provider.twilio.sid"
              value={v.sid}
              onChange={(e) => set("sid", e.target.value)}
              error={error}
              required
              autoComplete="off"
            />
            <Field
              label={t("token")}
              name="provider.twilio.token"
              type="password"
              autoComplete="new-password"
              value={v.token}
              onChange={(e) => set("token", e.target.value)}
              error={error}
              hint={editing && initial.type === "twilio" ? t("tokenKeepHint") : t("passwordHint")}
            />
            <Field
              label={t("senderNumber")}
              name="provider.twilio.sender_number"
              value={v.senderNumber}
              onChange={(e) => set("senderNumber", e.target.value)}
              error={error}
              required
            />
            <Field
              label={t("baseUrl")}
              name="provider.twilio.base_url"
              type="url"
              value={v.baseUrl}
              onChange={(e) => set("baseUrl", e.target.value)}
              error={error}
              hint={t("baseUrlHint")}
            />
          </>
        )}
        {!disabled && (
          <button type="submit" className="primary" disabled={pending}>
            {submitLabel}
          </button>
        )}
      </ReadOnly>
    </form>
  );
}

function SmsCreate() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const createSms = useMutation(S.createSMSProvider);
  const form = useForm();
  const [key, setKey] = useState<{ id: string; key: string }>();
  if (!perms.write) return <ProviderLists />;
  return (
    <Page title={t("newSms")}>
      <p>
        <Link to="/notifications">{c("back")}</Link>
      </p>
      <section className="card">
        <h2>{t("settings")}</h2>
        <SmsForm
          initial={smsValuesOf(undefined)}
          editing={false}
          disabled={false}
          submitLabel={c("create")}
          pending={createSms.isPending}
          error={form.error}
          onSubmit={(v) =>
            form.run(async () => {
              const res = await createSms.mutateAsync({ provider: { description: v.description, providerType: smsTypeOf(v) } });
              await qc.invalidateQueries();
              const id = res.details?.id ?? "";
              if (res.signingKey) setKey({ id, key: res.signingKey });
              else navigate(`/notifications/sms/${id}`);
            }, t("created"))
          }
        />
        <Status text={form.status} />
      </section>
      <SecretModal
        title={t("signingKeyTitle")}
        value={key?.key}
        onClose={() => {
          const id = key?.id ?? "";
          setKey(undefined);
          navigate(`/notifications/sms/${id}`);
        }}
      />
    </Page>
  );
}

function SmsItem({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const got = useQuery(S.getSMSProvider, { id });
  const patch = useMutation(S.patchSMSProvider);
  const form = useForm();
  const [key, setKey] = useState<string>();
  const p = got.data?.provider;
  if (got.isPending) return <p role="status">{c("loading")}</p>;
  if (!p) return <Missing error={got.error} />;
  const title = p.provider?.description || id;
  return (
    <Page title={title}>
      <p>
        <Link to="/notifications">{c("back")}</Link>
      </p>
      <ProviderState kind="sms" id={id} state={p.state} />
      <section className="card">
        <h2>{t("settings")}</h2>
        <SmsForm
          key={String(p.details?.sequence ?? "")}
          initial={smsValuesOf(p)}
          editing
          disabled={!perms.write}
          submitLabel={c("save")}
          pending={patch.isPending}
          error={form.error}
          onSubmit={(v) =>
            form.run(async () => {
              const res = await patch.mutateAsync({ id, provider: { description: v.description, providerType: smsTypeOf(v) } });
              if (res.signingKey) setKey(res.signingKey);
              await qc.invalidateQueries();
            }, c("saved"))
          }
        />
        <Status text={form.status} />
      </section>
      {perms.write && <ProviderTest kind="sms" id={id} />}
      <ProviderDelete kind="sms" id={id} name={title} />
      <SecretModal title={t("signingKeyTitle")} value={key} onClose={() => setKey(undefined)} />
    </Page>
  );
}

// ---- shared by both kinds ----

/** For a user who may only read: the form's inputs disabled. */
function ReadOnly({ when, children }: { when: boolean; children: ReactNode }) {
  return when ? <fieldset disabled>{children}</fieldset> : children;
}

function Missing({ error }: { error: unknown }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  return (
    <Page title={t("title")}>
      <ErrorText error={error ? errorOf(error) : { message: c("notFound") }} />
      <p>
        <Link to="/notifications">{c("back")}</Link>
      </p>
    </Page>
  );
}

function ProviderState({ kind, id, state }: { kind: "smtp" | "sms"; id: string; state: State }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const activateSmtp = useMutation(S.activateSMTPProvider);
  const deactivateSmtp = useMutation(S.deactivateSMTPProvider);
  const activateSms = useMutation(S.activateSMSProvider);
  const deactivateSms = useMutation(S.deactivateSMSProvider);
  const form = useForm();
  const active = state === State.EFFECTIVE_STATE_ACTIVE;
  return (
    <section className="card">
      <h2>{c("state")}</h2>
      <p>
        <strong>{stateText(c, state)}</strong>: {active ? t("activeNote") : t("inactiveNote")}
      </p>
      <ErrorText error={form.error} />
      {perms.write && (
        <div className="buttons">
          {active ? (
            <button
              type="button"
              onClick={() =>
                form.run(async () => {
                  await (kind === "smtp" ? deactivateSmtp : deactivateSms).mutateAsync({ id });
                  await qc.invalidateQueries();
                }, t("deactivated"))
              }
            >
              {c("deactivate")}
            </button>
          ) : (
            <button
              type="button"
              className="primary"
              onClick={() =>
                form.run(async () => {
                  await (kind === "smtp" ? activateSmtp : activateSms).mutateAsync({ id });
                  await qc.invalidateQueries();
                }, t("activated"))
              }
            >
              {t("activate")}
            </button>
          )}
        </div>
      )}
      <Status text={form.status} />
    </section>
  );
}

function ProviderTest({ kind, id }: { kind: "smtp" | "sms"; id: string }) {
  const t = useT(messages);
  const testSmtp = useMutation(S.testSMTPProvider);
  const testSms = useMutation(S.testSMSProvider);
  const [receiver, setReceiver] = useState("");
  const [result, setResult] = useState<{ ok: true } | { ok: false; error: FormError }>();
  const pending = testSmtp.isPending || testSms.isPending;
  const field = kind === "smtp" ? "receiver_address" : "receiver_phone";
  const failure = result && !result.ok ? result.error : undefined;
  return (
    <section className="card">
      <h2>{t("test")}</h2>
      <p>{kind === "smtp" ? t("testSmtpIntro") : t("testSmsIntro")}</p>
      <form
        noValidate
        className="toolbar"
        onSubmit={async (e) => {
          e.preventDefault();
          setResult(undefined);
          try {
            if (kind === "smtp") await testSmtp.mutateAsync({ id, receiverAddress: receiver.trim() });
            else await testSms.mutateAsync({ id, receiverPhone: receiver.trim() });
            setResult({ ok: true });
          } catch (err) {
            setResult({ ok: false, error: errorOf(err) });
          }
        }}
      >
        <Field
          label={kind === "smtp" ? t("receiverAddress") : t("receiverPhone")}
          name={field}
          type={kind === "smtp" ? "email" : "tel"}
          value={receiver}
          onChange={(e) => setReceiver(e.target.value)}
          error={failure}
          required
        />
        <div className="field">
          <button type="submit" disabled={pending}>
            {pending ? t("testSending") : t("sendTest")}
          </button>
        </div>
      </form>
      {failure && failure.field !== field && (
        <div role="alert" className="error-box">
          <strong>{t("testFailed")}</strong> {failure.message}
        </div>
      )}
      <Status text={result?.ok ? (kind === "smtp" ? t("testMailOk") : t("testSmsOk")) : ""} />
    </section>
  );
}

function ProviderDelete({ kind, id, name }: { kind: "smtp" | "sms"; id: string; name: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const delSmtp = useMutation(S.deleteSMTPProvider);
  const delSms = useMutation(S.deleteSMSProvider);
  const form = useForm();
  if (!perms.del) return null;
  return (
    <section className="card">
      <h2>{t("deleteSection")}</h2>
      <ErrorText error={form.error} />
      <ConfirmButton
        label={c("delete")}
        question={c("confirmDelete", { name })}
        onConfirm={async () => {
          const ok = await form.run(() => (kind === "smtp" ? delSmtp : delSms).mutateAsync({ id }), t("deleted"));
          if (ok) {
            // the deleted one is not read again: only marked stale, the list reads anew when shown
            await qc.invalidateQueries({ refetchType: "none" });
            navigate("/notifications");
          }
        }}
      />
      <Status text={form.status} />
    </section>
  );
}
