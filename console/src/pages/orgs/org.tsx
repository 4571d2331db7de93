import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { type GetOrganization, OrganizationState } from "../../../../gen/svc/resources/org/v3alpha/org_pb.js";
import { OrganizationService } from "../../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { useAccess, useOrg } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/orgs";
import { navigate } from "../../router";
import { BackLink, Card, ConfirmButton, ErrorText, Field, Missing, Page, Status, SubmitForm, useDate, useRun } from "../../ui";
import { YesNo } from "../projects/kit";
import { Domains } from "./domains";

export function OrgPage({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const got = useQuery(OrganizationService.method.getOrganization, { id });
  const org = got.data?.organization;
  if (got.isError) {
    return <Missing title={t("title")} error={got.error} back="/orgs" backLabel={t("backToList")} />;
  }
  if (!org) return <p role="status">{c("loading")}</p>;
  return <OrgView org={org} />;
}

function OrgView({ org }: { org: GetOrganization }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const date = useDate();
  const access = useAccess();
  const { orgId, setOrgId } = useOrg();
  const id = org.details?.id ?? "";
  const canWrite = access.inOrg("org.write", id);
  const canDelete = access.inOrg("org.delete", id);
  const canSetDefault = access.everywhere("iam.write");
  const mayWorkIn = access.everywhere("org.read") || access.orgIds.includes(id);
  const active = org.state !== OrganizationState.INACTIVE;

  const deactivate = useMutation(OrganizationService.method.deactivateOrganization);
  const reactivate = useMutation(OrganizationService.method.reactivateOrganization);
  const setDefault = useMutation(OrganizationService.method.setAsInstanceDefault);
  const remove = useMutation(OrganizationService.method.deleteOrganization);
  const stateAction = useRun({ refresh: true });

  return (
    <Page
      title={org.name}
      actions={
        id === orgId ? (
          <span>{t("workingHere")}</span>
        ) : (
          mayWorkIn &&
          active && (
            <button type="button" onClick={() => setOrgId(id)}>
              {t("switchTo")}
            </button>
          )
        )
      }
    >
      <BackLink to="/orgs" label={t("backToList")} />
      <Card title={c("details")}>
        <dl className="props">
          <dt>{c("id")}</dt>
          <dd>{id}</dd>
          <dt>{t("primaryDomain")}</dt>
          <dd>{org.primaryDomain}</dd>
          <dt>{c("state")}</dt>
          <dd>{active ? c("active") : c("inactive")}</dd>
          <dt>{t("instanceDefault")}</dt>
          <dd>
            <YesNo value={org.isInstanceDefault} />
          </dd>
          <dt>{c("changed")}</dt>
          <dd>{date(org.details?.changeDate)}</dd>
        </dl>
      </Card>

      {canWrite && <Rename org={org} />}

      {(canWrite || canSetDefault || canDelete) && (
        <Card title={t("stateTitle")}>
          {org.isInstanceDefault ? <p className="hint">{t("defaultHint")}</p> : null}
          <ErrorText error={stateAction.error} />
          <div className="buttons">
            {canWrite &&
              !org.isInstanceDefault &&
              (active ? (
                <ConfirmButton
                  label={c("deactivate")}
                  question={t("confirmDeactivate", { name: org.name })}
                  onConfirm={() => stateAction.run(() => deactivate.mutateAsync({ id }), t("deactivated"))}
                />
              ) : (
                <button type="button" onClick={() => stateAction.run(() => reactivate.mutateAsync({ id }), t("reactivated"))}>
                  {c("reactivate")}
                </button>
              ))}
            {canSetDefault && !org.isInstanceDefault && active && (
              <button type="button" onClick={() => stateAction.run(() => setDefault.mutateAsync({ id }), t("nowDefault"))}>
                {t("setDefault")}
              </button>
            )}
            {canDelete && !org.isInstanceDefault && (
              <ConfirmButton
                label={c("delete")}
                question={t("confirmDeleteOrg", { name: org.name })}
                onConfirm={async () => {
                  const r = await stateAction.run(() => remove.mutateAsync({ id }));
                  if (r) {
                    if (id === orgId) setOrgId("");
                    navigate("/orgs");
                  }
                }}
              />
            )}
          </div>
          <Status text={stateAction.status} />
        </Card>
      )}

      <Domains orgId={id} canWrite={canWrite} />
    </Page>
  );
}

function Rename({ org }: { org: GetOrganization }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const [name, setName] = useState(org.name);
  const patch = useMutation(OrganizationService.method.patchOrganization);
  const action = useRun({ refresh: true });
  return (
    <Card title={t("renameTitle")}>
      <SubmitForm
        error={action.error}
        names={["organization.name"]}
        busy={action.busy}
        submitLabel={c("save")}
        status={action.status}
        onSubmit={() => action.run(() => patch.mutateAsync({ id: org.details?.id ?? "", organization: { name } }), c("saved"))}
      >
        <Field label={c("name")} name="organization.name" value={name} onChange={(e) => setName(e.target.value)} error={action.error} hint={t("renameHint")} />
      </SubmitForm>
    </Card>
  );
}
