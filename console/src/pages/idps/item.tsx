import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { OwnerType } from "../../../../gen/svc/object/v3alpha/object_pb.js";
import { IdentityProviderService } from "../../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { State, StatePolicy } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { orgCtx, useAccess, useCan, useOrg } from "../../access";
import { errorOf } from "../../api";
import { formatDate, useLanguage, useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/idps";
import { navigate } from "../../router";
import { ConfirmButton, ErrorText, fieldErrorOf, type FormError, Link, Missing, Page, Select, Status } from "../../ui";
import { ownerName, ProviderForm } from "./form";
import { type KindDef, kindByType } from "./kinds";
import { commonOf, configOf, idpOf, type KindGet, methodsOf, valuesOf } from "./values";

/** One provider: found by a search for its ID (which says its kind), then read with its kind's Get. */
export function IdpItem({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const { orgId } = useOrg();
  const found = useQuery(IdentityProviderService.method.searchIDPs, { ctx: orgCtx(orgId), filters: [{ filter: { case: "id", value: { id } } }] });
  const row = found.data?.result[0];
  const kind = kindByType(row?.type);
  if (found.isPending) return <p role="status">{c("loading")}</p>;
  if (!row || !kind) return <Missing title={t("title")} error={found.error} back="/idps" />;
  return <IdpDetail key={`${kind.id}:${id}`} kind={kind} id={id} />;
}

function IdpDetail({ kind, id }: { kind: KindDef; id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const lang = useLanguage();
  const { orgId } = useOrg();
  const can = useCan();
  const access = useAccess();
  const qc = useQueryClient();
  const methods = methodsOf(kind);
  // as this organisation sees it: its state and policy here
  const here = useQuery(methods.get, { id, ctx: orgCtx(orgId) });
  const view = (here.data as unknown as { idp?: KindGet } | undefined)?.idp;
  const owner = view?.details?.resourceOwner;
  const ownedHere = owner?.type === OwnerType.ORG && owner.id === orgId;
  const inOwner = (p: string) =>
    ownedHere ? can(p) : owner?.type === OwnerType.INSTANCE ? access.everywhere(p) : owner?.type === OwnerType.SYSTEM && access.inSystem(p);
  const canEdit = inOwner("idp.write");
  // as its owner sees it (its own state policy there), for a user who may change it there
  const there = useQuery(methods.get, { id }, { enabled: !!view && !ownedHere && canEdit });
  const ownerView = ownedHere ? view : (there.data as unknown as { idp?: KindGet } | undefined)?.idp;
  const patch = useMutation(methods.patch);
  const del = useMutation(IdentityProviderService.method.deleteIDP);
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const [delError, setDelError] = useState<FormError>();
  if (here.isPending) return <p role="status">{c("loading")}</p>;
  if (!view) return <Missing title={t("title")} error={here.error} back="/idps" />;
  const name = view.idp?.idp?.name || id;
  const editable = canEdit && !!ownerView;
  const shown = editable ? ownerView : view;
  return (
    <Page title={name}>
      <p>
        <Link to="/idps">{c("back")}</Link>
      </p>
      <section className="card">
        <h2>{t("overview")}</h2>
        <dl className="props">
          <dt>{t("kind")}</dt>
          <dd>{t(kind.label)}</dd>
          <dt>{c("id")}</dt>
          <dd>{id}</dd>
          <dt>{t("definedIn")}</dt>
          <dd>{ownerName(t, owner, orgId)}</dd>
          <dt>{t("effectiveState")}</dt>
          <dd>{view.state === State.EFFECTIVE_STATE_ACTIVE ? c("active") : c("inactive")}</dd>
          {view.callbackUrl && (
            <>
              <dt>{t("callbackUrl")}</dt>
              <dd>
                <code>{view.callbackUrl}</code>
              </dd>
            </>
          )}
          {view.serviceProviderMetadataUrl && (
            <>
              <dt>{t("spMetadataUrl")}</dt>
              <dd>
                <code>{view.serviceProviderMetadataUrl}</code>
              </dd>
            </>
          )}
          <dt>{c("changed")}</dt>
          <dd>{formatDate(lang, view.details?.changeDate ? timestampDate(view.details.changeDate) : undefined)}</dd>
        </dl>
      </section>
      {!ownedHere && <OrgPolicy kind={kind} id={id} view={view} ownerType={owner?.type} />}
      {!ownedHere && <p className="hint">{editable ? t("editAbove") : t("readOnlyConfig")}</p>}
      {!ownedHere && canEdit && there.isPending ? (
        <p role="status">{c("loading")}</p>
      ) : (
        <ProviderForm
          key={String(shown?.details?.sequence ?? "")}
          kind={kind}
          initialCommon={commonOf(shown?.idp?.idp)}
          initialValues={valuesOf(kind, shown?.idp?.config)}
          stored={shown?.idp?.config}
          editing
          readOnly={!editable}
          showOwnerPolicy={editable}
          ownerPolicyLabel={ownedHere ? t("effectiveState") : t("ownerPolicy")}
          submitLabel={c("save")}
          pending={patch.isPending}
          error={error}
          onSubmit={async (common, values) => {
            setError(undefined);
            setStatus("");
            try {
              // without ctx: in the context that owns the provider
              await patch.mutateAsync({ id, idp: { idp: idpOf(common), config: configOf(kind, values, true) } });
              await qc.invalidateQueries();
              setStatus(c("saved"));
            } catch (err) {
              setError(fieldErrorOf(err));
            }
          }}
        />
      )}
      <Status text={status} />
      {inOwner("idp.delete") && (
        <section className="card">
          <h2>{t("deleteSection")}</h2>
          <p>{t("deleteIntro")}</p>
          <ErrorText error={delError} />
          <ConfirmButton
            label={c("delete")}
            question={c("confirmDelete", { name })}
            onConfirm={async () => {
              setDelError(undefined);
              try {
                await del.mutateAsync({ id });
                // the deleted one is not read again: only marked stale, the list reads anew when shown
                await qc.invalidateQueries({ refetchType: "none" });
                navigate("/idps");
              } catch (err) {
                setDelError(errorOf(err));
              }
            }}
          />
        </section>
      )}
    </Page>
  );
}

/** The chosen organisation's own state policy for a provider defined above it: inherit, activate or deactivate. */
function OrgPolicy({ kind, id, view, ownerType }: { kind: KindDef; id: string; view: KindGet; ownerType: OwnerType | undefined }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const { orgId } = useOrg();
  const can = useCan();
  const qc = useQueryClient();
  const patch = useMutation(methodsOf(kind).patch);
  const current = view.idp?.idp?.statePolicy ?? StatePolicy.INHERIT;
  const [policy, setPolicy] = useState<StatePolicy>(current === StatePolicy.UNSPECIFIED ? StatePolicy.INHERIT : current);
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const parentState = view.parent?.state === State.EFFECTIVE_STATE_ACTIVE ? c("active") : c("inactive");
  const mayChange = can("idp.write");
  return (
    <section className="card">
      <h2>{t("statePolicySection")}</h2>
      <p>{ownerType === OwnerType.SYSTEM ? t("statePolicyIntroSystem") : t("statePolicyIntroInstance")}</p>
      {view.parent && <p>{t("parentState", { state: parentState })}</p>}
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setError(undefined);
          setStatus("");
          try {
            // in this organisation: only its own policy
            await patch.mutateAsync({ id, ctx: orgCtx(orgId), idp: { idp: { statePolicy: policy } } });
            await qc.invalidateQueries();
            setStatus(c("saved"));
          } catch (err) {
            setError(fieldErrorOf(err));
          }
        }}
      >
        <ErrorText error={error} fields={["idp.idp.state_policy"]} />
        {mayChange ? (
          <>
            <Select
              label={t("policy")}
              name="idp.idp.state_policy"
              value={String(policy)}
              onChange={(v) => setPolicy(Number(v) as StatePolicy)}
              options={[
                { value: String(StatePolicy.INHERIT), label: t("policyInherit", { state: parentState }) },
                { value: String(StatePolicy.ACTIVATE), label: t("policyActivate") },
                { value: String(StatePolicy.DEACTIVATE), label: t("policyDeactivate") },
              ]}
              error={error}
            />
            <button type="submit" className="primary" disabled={patch.isPending}>
              {c("save")}
            </button>
          </>
        ) : (
          <p>
            {t("policy")}:{" "}
            {policy === StatePolicy.INHERIT ? t("policyInheritShort") : policy === StatePolicy.ACTIVATE ? t("policyActivate") : t("policyDeactivate")}
          </p>
        )}
        <Status text={status} />
      </form>
    </section>
  );
}
