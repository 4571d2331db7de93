import { create } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { RequestContextSchema } from "../../../../gen/svc/object/v3alpha/object_pb.js";
import { orgCtx, useOrg } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/idps";
import { navigate } from "../../router";
import { fieldErrorOf, Link, Page, Select, Status } from "../../ui";
import type { FormError } from "../../ui";
import { ProviderForm } from "./form";
import { KINDS, kindById } from "./kinds";
import { IdpList, useCreateTargets } from "./list";
import { commonOf, configOf, idpOf, methodsOf, valuesOf } from "./values";

export function KindPicker() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const targets = useCreateTargets();
  if (!targets.org && !targets.instance && !targets.system) return <IdpList />;
  return (
    <Page title={t("createProvider")}>
      <p>
        <Link to="/idps">{c("back")}</Link>
      </p>
      <h2>{t("chooseKind")}</h2>
      <ul className="tiles">
        {KINDS.map((k) => (
          <li key={k.id}>
            <Link to={`/idps/new/${k.id}`} className="tile">
              <strong>{t(k.label)}</strong>
              <br />
              <span className="hint">{t(k.text)}</span>
            </Link>
          </li>
        ))}
      </ul>
    </Page>
  );
}

type Target = "org" | "instance" | "system";

export function CreateIdp({ kindId }: { kindId: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const kind = kindById(kindId);
  const { orgId } = useOrg();
  const targets = useCreateTargets();
  const qc = useQueryClient();
  const mutation = useMutation(methodsOf(kind ?? KINDS[0]!).create);
  const [target, setTarget] = useState<Target>(targets.org ? "org" : targets.instance ? "instance" : "system");
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  if (!kind || (!targets.org && !targets.instance && !targets.system)) return <KindPicker />;
  const options = (
    [
      ["org", t("ownerOrg")],
      ["instance", t("ownerInstance")],
      ["system", t("ownerSystem")],
    ] as const
  )
    .filter(([k]) => targets[k])
    .map(([value, label]) => ({ value, label }));
  return (
    <Page title={t("newProvider", { kind: t(kind.label) })}>
      <p>
        <Link to="/idps/new">{c("back")}</Link>
      </p>
      <p>{t(kind.text)}</p>
      <ProviderForm
        kind={kind}
        initialCommon={commonOf(undefined)}
        initialValues={valuesOf(kind, undefined)}
        editing={false}
        readOnly={false}
        showOwnerPolicy
        ownerPolicyLabel={t("ownerPolicy")}
        top={
          options.length > 1 ? (
            <>
              <Select label={t("owner")} name="ctx" value={target} onChange={(v) => setTarget(v as Target)} options={options} error={error} />
              <p className="hint">{t("ownerHint")}</p>
            </>
          ) : undefined
        }
        submitLabel={c("create")}
        pending={mutation.isPending}
        error={error}
        onSubmit={async (common, values) => {
          setError(undefined);
          setStatus("");
          // the instance: the one of the console's host (no ctx)
          const ctx =
            target === "org" ? orgCtx(orgId) : target === "system" ? create(RequestContextSchema, { owner: { case: "system", value: true } }) : undefined;
          try {
            const res = (await mutation.mutateAsync({ ctx, idp: { idp: idpOf(common), config: configOf(kind, values, false) } })) as unknown as {
              details?: { id: string };
            };
            setStatus(t("created"));
            await qc.invalidateQueries();
            navigate(`/idps/${res.details?.id ?? ""}`);
          } catch (err) {
            setError(fieldErrorOf(err));
          }
        }}
      />
      <Status text={status} />
    </Page>
  );
}
