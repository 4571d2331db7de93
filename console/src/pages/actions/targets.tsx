// Targets: the endpoints the server calls. A searchable, sortable page of them with a create dialog (the signing key
// shown once), and a page per target to change or delete it and to see the executions that call it.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ActionService } from "../../../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { type Target, TargetFieldName } from "../../../../gen/svc/resources/action/v3alpha/target_pb.js";
import { TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useAccess } from "../../access";
import { errorOf } from "../../api";
import { formatDate, useLanguage, useT } from "../../i18n";
import { messages } from "../../i18n/actions";
import { messages as core } from "../../i18n/core";
import { navigate } from "../../router";
import { type Column, ConfirmButton, DataTable, ErrorText, Field, type FormError, Link, Modal, Page, SecretModal, Status, useRun } from "../../ui";
import { durationOf, kindOf, modeOf, urlOf, useSecondsText } from "./common";
import { ExecutionsSection } from "./executions";
import { TargetForm, targetErrorOf, targetTypeOf, useTargetTexts, valuesOf } from "./target-form";

const PAGE = 20;

const sortColumns: Record<string, TargetFieldName> = {
  name: TargetFieldName.NAME,
  type: TargetFieldName.TARGET_TYPE,
  url: TargetFieldName.URL,
  timeout: TargetFieldName.TIMEOUT,
  changed: TargetFieldName.CHANGE_DATE,
};

/** The instance's targets: search by name, sort by any column, page; create one. */
export function TargetsSection() {
  const t = useT(messages);
  const c = useT(core);
  const lang = useLanguage();
  const access = useAccess();
  const texts = useTargetTexts();
  const seconds = useSecondsText();
  const [search, setSearch] = useState("");
  const [q, setQ] = useState("");
  const [offset, setOffset] = useState(0);
  const [sort, setSort] = useState<{ column: string; asc: boolean } | undefined>(undefined);
  const [creating, setCreating] = useState(false);
  const [signingKey, setSigningKey] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState("");
  const list = useQuery(
    ActionService.method.searchTargets,
    {
      query: { offset: BigInt(offset), limit: PAGE, asc: sort?.asc ?? false },
      sortingColumn: sort ? sortColumns[sort.column] : TargetFieldName.UNSPECIFIED,
      filters: q ? [{ filter: { case: "name", value: { name: q, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [],
    },
    { placeholderData: keepPreviousData },
  );
  const columns: Column<(typeof rows)[number]>[] = [
    {
      key: "name",
      label: c("name"),
      sort: "name",
      render: (r) => <Link to={`/actions/targets/${encodeURIComponent(r.details?.id ?? "")}`}>{r.target?.name}</Link>,
    },
    { key: "type", label: t("type"), sort: "type", render: (r) => texts.kind(kindOf(r.target)) },
    { key: "url", label: t("url"), sort: "url", render: (r) => urlOf(r.target) },
    { key: "timeout", label: t("timeout"), sort: "timeout", render: (r) => seconds(r.target?.timeout) },
    { key: "mode", label: t("mode"), render: (r) => texts.mode(modeOf(r.target)) },
    { key: "changed", label: c("changed"), sort: "changed", render: (r) => formatDate(lang, r.details?.changeDate && timestampDate(r.details.changeDate)) },
  ];
  const rows = list.data?.result ?? [];
  return (
    <section className="card" aria-labelledby="targets-h">
      <h2 id="targets-h">{t("targets")}</h2>
      <p className="hint">{t("targetsIntro")}</p>
      <div className="toolbar">
        <search>
          <form
            className="buttons"
            onSubmit={(e) => {
              e.preventDefault();
              setQ(search.trim());
              setOffset(0);
            }}
          >
            <Field label={t("searchByName")} name="filters.name.name" type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
            <div className="field">
              <button type="submit">{c("search")}</button>
            </div>
          </form>
        </search>
        {access.everywhere("action.target.write") && (
          <div className="field">
            <button type="button" className="primary" onClick={() => setCreating(true)}>
              {t("newTarget")}
            </button>
          </div>
        )}
      </div>
      {status && <Status text={status} />}
      <ErrorText error={list.error ? errorOf(list.error) : undefined} />
      <DataTable
        caption={t("targets")}
        columns={columns}
        rows={list.data ? rows : undefined}
        rowKey={(r) => r.details?.id ?? ""}
        sort={sort}
        onSort={(column, asc) => {
          setSort({ column, asc });
          setOffset(0);
        }}
        paging={{ offset, limit: PAGE, total: Number(list.data?.details?.totalResult ?? 0), onPage: setOffset }}
        loading={list.isFetching}
      />
      <CreateTargetModal
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(key) => {
          setCreating(false);
          setStatus(t("targetCreated"));
          setSigningKey(key);
        }}
      />
      <SecretModal title={t("signingKeyTitle")} value={signingKey} onClose={() => setSigningKey(undefined)} />
    </section>
  );
}

function CreateTargetModal({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (signingKey: string) => void }) {
  const t = useT(messages);
  return (
    <Modal title={t("newTarget")} open={open} onClose={onClose}>
      <CreateTargetForm onClose={onClose} onCreated={onCreated} />
    </Modal>
  );
}

function CreateTargetForm({ onClose, onCreated }: { onClose: () => void; onCreated: (signingKey: string) => void }) {
  const t = useT(messages);
  const c = useT(core);
  const qc = useQueryClient();
  const [values, setValues] = useState(() => valuesOf(undefined));
  const form = useRun({ toError: targetErrorOf });
  const create = useMutation(ActionService.method.createTarget);
  return (
    <TargetForm
      values={values}
      setValues={setValues}
      error={form.error}
      pending={create.isPending}
      submitLabel={c("create")}
      onCancel={onClose}
      onSubmit={() =>
        form.run(async () => {
          const res = await create.mutateAsync({
            target: {
              name: values.name.trim(),
              targetType: targetTypeOf(values),
              timeout: durationOf(values.timeout),
              executionType:
                values.mode === "async"
                  ? { case: "isAsync", value: true }
                  : values.mode === "interrupt"
                    ? { case: "interruptOnError", value: true }
                    : { case: undefined },
            },
          });
          await qc.invalidateQueries();
          onCreated(res.signingKey);
        })
      }
    >
      {create.isPending && <p className="hint">{t("creating")}</p>}
    </TargetForm>
  );
}

/** One target: its properties, a form to change it, deletion, and the executions that call it. */
export function TargetPage({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(core);
  const lang = useLanguage();
  const access = useAccess();
  const texts = useTargetTexts();
  const seconds = useSecondsText();
  const qc = useQueryClient();
  const got = useQuery(ActionService.method.getTarget, { id });
  const del = useMutation(ActionService.method.deleteTarget);
  const [deleteError, setDeleteError] = useState<FormError>(undefined);
  const target = got.data?.target;
  const title = target?.target?.name ?? t("target");
  return (
    <Page
      title={title}
      actions={
        target &&
        access.everywhere("action.target.delete") && (
          <ConfirmButton
            label={c("delete")}
            question={`${c("confirmDelete", { name: title })} ${t("deleteTargetNote")}`}
            onConfirm={async () => {
              setDeleteError(undefined);
              try {
                await del.mutateAsync({ id });
                // stale without refetching here: this page's GetTarget would be NOT_FOUND; the list refetches on mount
                await qc.invalidateQueries({ refetchType: "none" });
                navigate("/actions");
              } catch (err) {
                setDeleteError(errorOf(err));
              }
            }}
          />
        )
      }
    >
      <p>
        <Link to="/actions">{t("backToActions")}</Link>
      </p>
      <ErrorText error={deleteError} />
      {got.isPending && <p role="status">{c("loading")}</p>}
      <ErrorText error={got.error ? errorOf(got.error) : undefined} />
      {target && (
        <>
          <section className="card" aria-labelledby="target-props-h">
            <h2 id="target-props-h">{c("details")}</h2>
            <dl className="props">
              <dt>{c("id")}</dt>
              <dd>{target.details?.id}</dd>
              <dt>{t("type")}</dt>
              <dd>{texts.kind(kindOf(target.target))}</dd>
              <dt>{t("url")}</dt>
              <dd>{urlOf(target.target)}</dd>
              <dt>{t("timeout")}</dt>
              <dd>{seconds(target.target?.timeout)}</dd>
              <dt>{t("mode")}</dt>
              <dd>{texts.mode(modeOf(target.target))}</dd>
              <dt>{c("changed")}</dt>
              <dd>{formatDate(lang, target.details?.changeDate && timestampDate(target.details.changeDate))}</dd>
            </dl>
            <p className="hint">{t("signingKeyHidden")}</p>
          </section>
          {access.everywhere("action.target.write") && (
            <section className="card" aria-labelledby="target-change-h">
              <h2 id="target-change-h">{t("changeTarget")}</h2>
              <ChangeTargetForm key={target.details?.id} id={id} target={target.target} />
            </section>
          )}
          <ExecutionsSection targetId={id} />
        </>
      )}
    </Page>
  );
}

function ChangeTargetForm({ id, target }: { id: string; target: Target | undefined }) {
  const c = useT(core);
  const qc = useQueryClient();
  const initial = valuesOf(target);
  const [values, setValues] = useState(initial);
  const form = useRun({ toError: targetErrorOf });
  const patch = useMutation(ActionService.method.patchTarget);
  return (
    <TargetForm
      values={values}
      setValues={setValues}
      error={form.error}
      pending={patch.isPending}
      submitLabel={c("save")}
      onSubmit={() => {
        const typeChanged = values.kind !== initial.kind || values.url.trim() !== initial.url;
        const modeChanged = values.mode !== initial.mode;
        return form.run(async () => {
          await patch.mutateAsync({
            id,
            target: {
              name: values.name.trim() !== initial.name ? values.name.trim() : undefined,
              targetType: typeChanged ? targetTypeOf(values) : { case: undefined },
              timeout: values.timeout !== initial.timeout ? (durationOf(values.timeout) ?? { seconds: 0n, nanos: 0 }) : undefined,
              // "continue": both flags off (is_async false also clears interrupt_on_error)
              executionType: !modeChanged
                ? { case: undefined }
                : values.mode === "interrupt"
                  ? { case: "interruptOnError", value: true }
                  : { case: "isAsync", value: values.mode === "async" },
            },
          });
          await qc.invalidateQueries();
        }, c("saved"));
      }}
    >
      <Status text={form.status} />
    </TargetForm>
  );
}
