// Instances of the system (InstanceService, system members only): search, create with the first organisation and
// administrator, rename, domains, limits (blocking and audit log retention), delete. The service names the
// instance by instance_id in each request: no ctx.
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema, timestampDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { type Instance, InstanceService } from "../../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { InIDsFilterSchema } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useAccess } from "../access";
import { errorOf } from "../api";
import type { AreaProps } from "../areas";
import { formatDate, useLanguage, useT } from "../i18n";
import { messages as coreMessages } from "../i18n/core";
import { messages } from "../i18n/instances";
import { match, navigate } from "../router";
import { Checkbox, type Column, ConfirmButton, DataTable, ErrorText, Field, type FormError, Link, Page, SecretModal, Select, Status } from "../ui";

const PAGE = 20;

/** A server error, its field path without list indexes ("domains[1]" → "domains"), as the inputs are named. */
function formError(err: unknown): FormError {
  const e = errorOf(err);
  return e.field ? { ...e, field: e.field.replace(/\[\d+\]/g, "") } : e;
}

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
      setError(formError(err));
      return false;
    }
  };
  return { error, status, run, setStatus };
}

export default function Instances({ path }: AreaProps) {
  if (path === "/") return <InstanceList />;
  if (path === "/new") return <CreateInstance />;
  const m = match("/:id", path);
  if (m) return <InstanceItem id={m.id!} />;
  return <InstanceList />;
}

const isOwnInstance = (i: Instance) => i.domains.includes(location.hostname.toLowerCase());

function InstanceList() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const lang = useLanguage();
  const access = useAccess();
  const [by, setBy] = useState<"domain" | "id">("domain");
  const [text, setText] = useState("");
  const [asc, setAsc] = useState(false);
  const [offset, setOffset] = useState(0);
  const needle = text.trim();
  const filter =
    by === "domain"
      ? ({ case: "domain", value: needle.toLowerCase() } as const)
      : ({ case: "inIds", value: create(InIDsFilterSchema, { ids: [needle] }) } as const);
  const list = useQuery(InstanceService.method.searchInstances, {
    query: { offset: BigInt(offset), limit: PAGE, asc },
    filters: needle ? [{ filter }] : [],
  });
  const columns: Column<Instance>[] = [
    {
      key: "name",
      label: c("name"),
      render: (i) => <Link to={`/instances/${i.details?.id ?? ""}`}>{i.name || i.details?.id}</Link>,
    },
    { key: "id", label: c("id"), render: (i) => i.details?.id },
    {
      key: "domains",
      label: t("domains"),
      render: (i) => i.domains.map((d) => (d === i.primaryDomain ? `${d} (${t("primary")})` : d)).join(", "),
    },
    {
      key: "state",
      label: c("state"),
      render: (i) => (
        <>
          {i.blocked ? t("blocked") : t("serving")}
          {isOwnInstance(i) ? ` (${t("thisInstance")})` : ""}
        </>
      ),
    },
    { key: "changed", label: c("changed"), render: (i) => formatDate(lang, i.details?.changeDate ? timestampDate(i.details.changeDate) : undefined) },
  ];
  return (
    <Page
      title={t("title")}
      actions={
        access.inSystem("system.instance.write") && (
          <button type="button" className="primary" onClick={() => navigate("/instances/new")}>
            {t("createInstance")}
          </button>
        )
      }
    >
      <p>{t("intro")}</p>
      <search className="toolbar">
        <Select
          label={t("searchBy")}
          name="filters.by"
          value={by}
          onChange={(v) => {
            setBy(v as "domain" | "id");
            setOffset(0);
          }}
          options={[
            { value: "domain", label: t("byDomain") },
            { value: "id", label: t("byId") },
          ]}
        />
        <Field
          label={c("search")}
          name={by === "domain" ? "filters.domain" : "filters.in_ids.ids"}
          type="search"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setOffset(0);
          }}
        />
        <Select
          label={t("order")}
          name="query.asc"
          value={asc ? "asc" : "desc"}
          onChange={(v) => {
            setAsc(v === "asc");
            setOffset(0);
          }}
          options={[
            { value: "desc", label: t("newestFirst") },
            { value: "asc", label: t("oldestFirst") },
          ]}
        />
      </search>
      <ErrorText error={list.error ? errorOf(list.error) : undefined} />
      <DataTable
        caption={t("caption")}
        columns={columns}
        rows={list.data?.result}
        rowKey={(i) => i.details?.id ?? ""}
        loading={list.isFetching}
        paging={{ offset, limit: PAGE, total: Number(list.data?.details?.totalResult ?? 0), onPage: setOffset }}
      />
    </Page>
  );
}

function CreateInstance() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const createInstance = useMutation(InstanceService.method.createInstance);
  const form = useForm();
  const [name, setName] = useState("");
  const [domains, setDomains] = useState("");
  const [firstOrg, setFirstOrg] = useState("");
  const [kind, setKind] = useState<"human" | "machine">("human");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [email, setEmail] = useState("");
  const [givenName, setGivenName] = useState("");
  const [familyName, setFamilyName] = useState("");
  const [changeRequired, setChangeRequired] = useState(true);
  const [machineName, setMachineName] = useState("");
  const [created, setCreated] = useState<{ id: string; pat: string }>();
  if (!access.inSystem("system.instance.write")) return <InstanceList />;
  const fields = [
    "name",
    "domains",
    "first_org_name",
    "human.username",
    "human.password",
    "human.email",
    "human.given_name",
    "human.family_name",
    "machine.username",
    "machine.name",
  ];
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await form.run(async () => {
      const res = await createInstance.mutateAsync({
        name,
        domains: domains.split(/[\s,]+/).filter(Boolean),
        firstOrgName: firstOrg,
        administrator:
          kind === "human"
            ? {
                case: "human",
                value: { username, password, email, givenName, familyName, passwordChangeRequired: changeRequired },
              }
            : { case: "machine", value: { username, name: machineName } },
      });
      await qc.invalidateQueries();
      const id = res.details?.id ?? "";
      if (res.pat) setCreated({ id, pat: res.pat });
      else navigate(`/instances/${id}`);
    }, t("created"));
  };
  return (
    <Page title={t("newInstance")}>
      <p>
        <Link to="/instances">{c("back")}</Link>
      </p>
      <form onSubmit={submit} noValidate>
        <ErrorText error={form.error} fields={fields} />
        <section className="card">
          <h2>{c("details")}</h2>
          <Field label={t("instanceName")} name="name" value={name} onChange={(e) => setName(e.target.value)} error={form.error} required />
          <Field
            label={t("domainsField")}
            name="domains"
            value={domains}
            onChange={(e) => setDomains(e.target.value)}
            error={form.error}
            hint={t("domainsHint")}
            autoCapitalize="none"
            spellCheck={false}
          />
          <Field label={t("firstOrgName")} name="first_org_name" value={firstOrg} onChange={(e) => setFirstOrg(e.target.value)} error={form.error} required />
        </section>
        <section className="card">
          <h2>{t("administrator")}</h2>
          <Select
            label={t("adminKind")}
            name="administrator"
            value={kind}
            onChange={(v) => setKind(v as "human" | "machine")}
            options={[
              { value: "human", label: t("adminHuman") },
              { value: "machine", label: t("adminMachine") },
            ]}
            error={form.error}
          />
          <Field
            label={t("username")}
            name={`${kind}.username`}
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            error={form.error}
            autoComplete="off"
            required
          />
          {kind === "human" ? (
            <>
              <Field
                label={t("password")}
                name="human.password"
                type="password"
                autoComplete="new-password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                error={form.error}
                required
              />
              <Field
                label={t("email")}
                name="human.email"
                type="email"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                error={form.error}
                hint={t("emailHint")}
              />
              <Field label={t("givenName")} name="human.given_name" value={givenName} onChange={(e) => setGivenName(e.target.value)} error={form.error} />
              <Field label={t("familyName")} name="human.family_name" value={familyName} onChange={(e) => setFamilyName(e.target.value)} error={form.error} />
              <Checkbox label={t("passwordChangeRequired")} name="human.password_change_required" checked={changeRequired} onChange={setChangeRequired} />
            </>
          ) : (
            <Field
              label={t("machineName")}
              name="machine.name"
              value={machineName}
              onChange={(e) => setMachineName(e.target.value)}
              error={form.error}
              required
            />
          )}
        </section>
        <div className="buttons">
          <button type="submit" className="primary" disabled={createInstance.isPending}>
            {t("createInstance")}
          </button>
        </div>
        <Status text={form.status} />
      </form>
      <SecretModal
        title={t("patTitle")}
        value={created?.pat}
        onClose={() => {
          const id = created?.id ?? "";
          setCreated(undefined);
          navigate(`/instances/${id}`);
        }}
      />
    </Page>
  );
}

const HOUR = 3600;
const DAY = 86400;

function retentionOf(d: Duration | undefined): { amount: string; unit: "hours" | "days" } {
  if (!d) return { amount: "", unit: "days" };
  const s = Number(d.seconds);
  return s % DAY === 0 ? { amount: String(s / DAY), unit: "days" } : { amount: String(Math.round(s / HOUR)), unit: "hours" };
}

function InstanceItem({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const lang = useLanguage();
  const got = useQuery(InstanceService.method.getInstance, { instanceId: id });
  const instance = got.data?.instance;
  if (got.isPending) return <p role="status">{c("loading")}</p>;
  if (!instance)
    return (
      <Page title={t("title")}>
        <ErrorText error={got.error ? errorOf(got.error) : { message: c("notFound") }} />
        <p>
          <Link to="/instances">{c("back")}</Link>
        </p>
      </Page>
    );
  const retention = retentionOf(instance.auditLogRetention);
  return (
    <Page title={instance.name || id}>
      <p>
        <Link to="/instances">{c("back")}</Link>
      </p>
      <section className="card">
        <h2>{t("properties")}</h2>
        <dl className="props">
          <dt>{c("id")}</dt>
          <dd>{id}</dd>
          <dt>{t("primaryDomain")}</dt>
          <dd>{instance.primaryDomain}</dd>
          <dt>{t("defaultOrg")}</dt>
          <dd>{instance.defaultOrgId}</dd>
          <dt>{c("state")}</dt>
          <dd>
            {instance.blocked ? t("blocked") : t("serving")}
            {isOwnInstance(instance) ? ` (${t("thisInstance")})` : ""}
          </dd>
          <dt>{t("auditLogRetention")}</dt>
          <dd>{retention.amount ? t(retention.unit === "days" ? "daysValue" : "hoursValue", { n: retention.amount }) : t("noRetention")}</dd>
          <dt>{c("changed")}</dt>
          <dd>{formatDate(lang, instance.details?.changeDate ? timestampDate(instance.details.changeDate) : undefined)}</dd>
        </dl>
      </section>
      <RenameInstance instance={instance} />
      <InstanceDomains instance={instance} />
      <InstanceLimits instance={instance} />
      <DeleteInstance instance={instance} />
    </Page>
  );
}

function RenameInstance({ instance }: { instance: Instance }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const patch = useMutation(InstanceService.method.patchInstance);
  const form = useForm();
  const [name, setName] = useState(instance.name);
  if (!access.inSystem("system.instance.write")) return null;
  return (
    <section className="card">
      <h2>{t("rename")}</h2>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          await form.run(async () => {
            await patch.mutateAsync({ instanceId: instance.details?.id ?? "", name });
            await qc.invalidateQueries();
          }, c("saved"));
        }}
      >
        <ErrorText error={form.error} fields={["name"]} />
        <Field label={t("instanceName")} name="name" value={name} onChange={(e) => setName(e.target.value)} error={form.error} required />
        <button type="submit" className="primary" disabled={patch.isPending}>
          {t("renameSave")}
        </button>
        <Status text={form.status} />
      </form>
    </section>
  );
}

function InstanceDomains({ instance }: { instance: Instance }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const add = useMutation(InstanceService.method.addInstanceDomain);
  const remove = useMutation(InstanceService.method.removeInstanceDomain);
  const primary = useMutation(InstanceService.method.setPrimaryInstanceDomain);
  const form = useForm();
  const [domain, setDomain] = useState("");
  const instanceId = instance.details?.id ?? "";
  const canWrite = access.inSystem("system.instance.write");
  const columns: Column<string>[] = [{ key: "domain", label: t("domain"), render: (d) => (d === instance.primaryDomain ? `${d} (${t("primary")})` : d) }];
  if (canWrite) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (d) =>
        // the primary domain cannot go, nor the one this console is served at
        d === instance.primaryDomain ? null : (
          <div className="buttons">
            <button
              type="button"
              onClick={() =>
                form.run(async () => {
                  await primary.mutateAsync({ instanceId, domain: d });
                  await qc.invalidateQueries();
                }, t("primarySet"))
              }
            >
              {t("setPrimary")}
            </button>
            {d !== location.hostname.toLowerCase() && (
              <ConfirmButton
                label={c("remove")}
                question={t("confirmRemoveDomain", { domain: d })}
                onConfirm={() =>
                  form.run(async () => {
                    await remove.mutateAsync({ instanceId, domain: d });
                    await qc.invalidateQueries();
                  }, t("domainRemoved"))
                }
              />
            )}
          </div>
        ),
    });
  }
  return (
    <section className="card">
      <h2>{t("domainsSection")}</h2>
      <p className="hint">{t("primaryNote")}</p>
      <ErrorText error={form.error} fields={canWrite ? ["domain"] : []} />
      <DataTable caption={t("domainsCaption")} columns={columns} rows={instance.domains} rowKey={(d) => d} />
      {canWrite && (
        <form
          className="toolbar"
          noValidate
          onSubmit={async (e) => {
            e.preventDefault();
            const ok = await form.run(async () => {
              await add.mutateAsync({ instanceId, domain: domain.trim() });
              await qc.invalidateQueries();
            }, t("domainAdded"));
            if (ok) setDomain("");
          }}
        >
          <Field
            label={t("newDomain")}
            name="domain"
            value={domain}
            onChange={(e) => setDomain(e.target.value)}
            error={form.error}
            autoCapitalize="none"
            spellCheck={false}
          />
          <div className="field">
            <button type="submit" disabled={add.isPending}>
              {t("addDomain")}
            </button>
          </div>
        </form>
      )}
      <Status text={form.status} />
    </section>
  );
}

function InstanceLimits({ instance }: { instance: Instance }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const limit = useMutation(InstanceService.method.limit);
  const form = useForm();
  const initial = retentionOf(instance.auditLogRetention);
  const [block, setBlock] = useState(instance.blocked);
  const [amount, setAmount] = useState(initial.amount);
  const [unit, setUnit] = useState<"hours" | "days">(initial.unit);
  if (!access.inSystem("system.instance.write")) return null;
  return (
    <section className="card">
      <h2>{t("limits")}</h2>
      <p className="hint">{t("limitsIntro")}</p>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          await form.run(async () => {
            const n = amount.trim() === "" ? undefined : Number(amount);
            const retention =
              n === undefined
                ? instance.auditLogRetention
                  ? { resetAuditLogRetention: true }
                  : {}
                : { auditLogRetention: create(DurationSchema, { seconds: BigInt(Math.round((Number.isFinite(n) ? n : 0) * (unit === "days" ? DAY : HOUR))) }) };
            await limit.mutateAsync({ instanceId: instance.details?.id ?? "", limits: { block, ...retention } });
            await qc.invalidateQueries();
          }, c("saved"));
        }}
      >
        <ErrorText error={form.error} fields={["limits.audit_log_retention"]} />
        <Checkbox label={t("block")} name="limits.block" checked={block} onChange={setBlock} />
        <div className="toolbar">
          <Field
            label={t("retention")}
            name="limits.audit_log_retention"
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
            error={form.error}
            hint={t("retentionHint")}
          />
          <Select
            label={t("unit")}
            name="limits.audit_log_retention.unit"
            value={unit}
            onChange={(v) => setUnit(v as "hours" | "days")}
            options={[
              { value: "hours", label: t("hours") },
              { value: "days", label: t("days") },
            ]}
          />
        </div>
        <button type="submit" className="primary" disabled={limit.isPending}>
          {c("save")}
        </button>
        <Status text={form.status} />
      </form>
    </section>
  );
}

function DeleteInstance({ instance }: { instance: Instance }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const del = useMutation(InstanceService.method.deleteInstance);
  const form = useForm();
  if (!access.inSystem("system.instance.delete")) return null;
  return (
    <section className="card">
      <h2>{t("dangerZone")}</h2>
      {isOwnInstance(instance) ? (
        <p>{t("cannotDeleteOwn")}</p>
      ) : (
        <>
          <p>{t("deleteIntro")}</p>
          <ErrorText error={form.error} />
          <ConfirmButton
            label={t("deleteInstance")}
            question={c("confirmDelete", { name: instance.name })}
            onConfirm={async () => {
              const ok = await form.run(() => del.mutateAsync({ instanceId: instance.details?.id ?? "" }), t("deleted"));
              if (ok) {
                // the deleted one is not read again: only marked stale, the list reads anew when shown
                await qc.invalidateQueries({ refetchType: "none" });
                navigate("/instances");
              }
            }}
          />
        </>
      )}
      <Status text={form.status} />
    </section>
  );
}
