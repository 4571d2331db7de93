// One instance: its properties, renaming, domains, limits and deletion.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { type Instance, InstanceService } from "../../../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/instances";
import { navigate } from "../../router";
import { BackLink, ConfirmButton, ErrorText, Field, fieldErrorOf, Missing, Page, Status, useDate, useRun } from "../../ui";
import { isOwnInstance } from "./list";
import { InstanceDomains, InstanceLimits, retentionOf } from "./parts";

export function InstanceItem({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const date = useDate();
  const got = useQuery(InstanceService.method.getInstance, { instanceId: id });
  const instance = got.data?.instance;
  if (got.isPending) return <p role="status">{c("loading")}</p>;
  if (!instance) return <Missing title={t("title")} error={got.error} back="/instances" />;
  const retention = retentionOf(instance.auditLogRetention);
  return (
    <Page title={instance.name || id}>
      <BackLink to="/instances" />
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
          <dd>{date(instance.details?.changeDate)}</dd>
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
  const form = useRun({ toError: fieldErrorOf });
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

function DeleteInstance({ instance }: { instance: Instance }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const del = useMutation(InstanceService.method.deleteInstance);
  const form = useRun({ toError: fieldErrorOf });
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
