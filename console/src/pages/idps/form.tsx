// The form of an identity provider of any kind: its name, state policy where it is defined, account options and the
// kind's configuration (kinds.ts), for creating and for changing. Secrets are write-only: the inputs start empty and a
// change sends a secret only when one is typed.
import { create } from "@bufbuild/protobuf";
import type { DescMessage, DescMethodUnary } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { type FormEvent, type ReactNode, type TextareaHTMLAttributes, useId, useState } from "react";
import { type Owner, OwnerType } from "../../../../gen/svc/object/v3alpha/object_pb.js";
import { AutoLinkingOption, type IDP } from "../../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { IdentityProviderService } from "../../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import type { Details, Parent, State } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { StatePolicy } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages } from "../../i18n/idps";
import { Checkbox, ErrorText, Field, type FormError, Select } from "../../ui";
import { type FieldDef, type KindDef, LDAP_ATTRIBUTES, TENANT_TYPES } from "./kinds";

type AnyUnary = DescMethodUnary<DescMessage, DescMessage>;

/** The Create, Patch and Get RPCs of a kind. */
export function methodsOf(kind: KindDef): { create: AnyUnary; patch: AnyUnary; get: AnyUnary } {
  const m = IdentityProviderService.method as unknown as Record<string, AnyUnary>;
  return { create: m[`create${kind.rpc}IDP`]!, patch: m[`patch${kind.rpc}IDP`]!, get: m[`get${kind.rpc}IDP`]! };
}

/** What Get<Kind>IDP returns, the same for every kind but the configuration. */
export interface KindGet {
  details?: Details;
  parent?: Parent;
  state: State;
  idp?: { idp?: IDP; config?: Record<string, unknown> };
  callbackUrl: string;
  serviceProviderMetadataUrl?: string;
}

/** A server error, its field path without list indexes ("idp.config.scopes[1]" → "idp.config.scopes"). */
export function formError(err: unknown): FormError {
  const e = errorOf(err);
  return e.field ? { ...e, field: e.field.replace(/\[\d+\]/g, "") } : e;
}

export type Values = Record<string, string | boolean>;

export interface Common {
  name: string;
  ownerPolicy: StatePolicy;
  isLinkingAllowed: boolean;
  isCreationAllowed: boolean;
  isAutoCreation: boolean;
  isAutoUpdate: boolean;
  autoLinking: AutoLinkingOption;
}

export function commonOf(idp: IDP | undefined): Common {
  const o = idp?.options;
  return {
    name: idp?.name ?? "",
    ownerPolicy: idp?.statePolicy === StatePolicy.DEACTIVATE ? StatePolicy.DEACTIVATE : StatePolicy.ACTIVATE,
    isLinkingAllowed: o?.isLinkingAllowed ?? false,
    isCreationAllowed: o?.isCreationAllowed ?? false,
    isAutoCreation: o?.isAutoCreation ?? false,
    isAutoUpdate: o?.isAutoUpdate ?? false,
    autoLinking: o?.autoLinking ?? AutoLinkingOption.UNSPECIFIED,
  };
}

/** The IDP message of a create or patch. */
export function idpOf(c: Common) {
  return {
    name: c.name,
    statePolicy: c.ownerPolicy,
    options: {
      isLinkingAllowed: c.isLinkingAllowed,
      isCreationAllowed: c.isCreationAllowed,
      isAutoCreation: c.isAutoCreation,
      isAutoUpdate: c.isAutoUpdate,
      autoLinking: c.autoLinking,
    },
  };
}

const split = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/** The form's values of a configuration as read (empty for a new one); secrets always empty. */
export function valuesOf(kind: KindDef, config: Record<string, unknown> | undefined): Values {
  const v: Values = {};
  for (const f of kind.fields) {
    const x = config?.[f.key];
    switch (f.kind) {
      case "secret":
      case "secretArea":
        v[f.key] = "";
        break;
      case "list":
        v[f.key] = Array.isArray(x) ? x.join(", ") : "";
        break;
      case "bool":
        v[f.key] = x === true;
        break;
      case "enum":
        v[f.key] = String(typeof x === "number" ? x : (f.options?.[0]?.value ?? 0));
        break;
      case "seconds": {
        const s = (x as { seconds?: bigint } | undefined)?.seconds;
        v[f.key] = s ? String(s) : "";
        break;
      }
      case "tenant": {
        const t = (x as { type?: { case?: string; value?: unknown } } | undefined)?.type;
        v["tenant.mode"] = t?.case === "tenantId" ? "single" : String(t?.case === "tenantType" ? t.value : 0);
        v["tenant.id"] = t?.case === "tenantId" ? String(t.value) : "";
        break;
      }
      case "attributes": {
        const a = (x ?? {}) as Record<string, unknown>;
        for (const [k] of LDAP_ATTRIBUTES) v[`attributes.${k}`] = typeof a[k] === "string" ? (a[k] as string) : "";
        break;
      }
      default:
        v[f.key] = typeof x === "string" ? x : "";
    }
  }
  return v;
}

/** The configuration of a create (`patch` false) or of a patch: every field present, secrets only when typed. */
export function configOf(kind: KindDef, v: Values, patch: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const str = (k: string) => String(v[k] ?? "");
  for (const f of kind.fields) {
    switch (f.kind) {
      case "secret":
      case "secretArea":
        if (!patch || str(f.key) !== "") out[f.key] = f.kind === "secretArea" ? str(f.key).trim() : str(f.key);
        break;
      case "list":
        out[f.key] = split(str(f.key));
        if (patch && f.replace) out[f.replace] = true;
        break;
      case "bool":
        out[f.key] = v[f.key] === true;
        break;
      case "enum":
        out[f.key] = Number(str(f.key));
        break;
      case "seconds": {
        const n = Number(str(f.key).trim() || "0");
        out[f.key] = create(DurationSchema, { seconds: BigInt(Number.isFinite(n) ? Math.trunc(n) : 0) });
        break;
      }
      case "tenant": {
        const mode = str("tenant.mode");
        out[f.key] = mode === "single" ? { type: { case: "tenantId", value: str("tenant.id").trim() } } : { type: { case: "tenantType", value: Number(mode) } };
        break;
      }
      case "attributes": {
        const a: Record<string, string> = {};
        for (const [k] of LDAP_ATTRIBUTES) a[k] = str(`attributes.${k}`).trim();
        out[f.key] = a;
        break;
      }
      default: {
        const s = f.kind === "textarea" ? str(f.key) : str(f.key).trim();
        if (!(patch && f.onlyIfSet && s === "")) out[f.key] = s;
      }
    }
  }
  return out;
}

/** Every request field the form has an input for, so that an error naming one shows there. */
export function fieldNames(kind: KindDef): string[] {
  const names = ["idp.idp.name", "idp.idp.state_policy", "idp.idp.options", "idp.idp.options.auto_linking", "ctx"];
  for (const f of kind.fields) {
    if (f.kind === "tenant") names.push("idp.config.tenant", "idp.config.tenant.tenant_id", "idp.config.tenant.tenant_type");
    else if (f.kind === "attributes") for (const [, p] of LDAP_ATTRIBUTES) names.push(`idp.config.attributes.${p}`);
    else names.push(`idp.config.${f.proto}`);
  }
  return names;
}

/** A labelled multi-line input, as ui's Field. */
export function TextArea({
  label,
  hint,
  error,
  ...area
}: Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, "name"> & { name: string; label: string; hint?: string; error?: FormError }) {
  const id = useId();
  const mine = error?.field === area.name ? error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} rows={6} aria-invalid={mine ? true : undefined} aria-describedby={mine || hint ? `${id}-d` : undefined} {...area} />
      {(mine || hint) && (
        <div id={`${id}-d`} className={mine ? "field-error" : "hint"}>
          {mine ?? hint}
        </div>
      )}
    </div>
  );
}

/** For a user who may only read: the inputs disabled. */
function ReadOnly({ when, children }: { when: boolean; children: ReactNode }) {
  return when ? <fieldset disabled>{children}</fieldset> : children;
}

export function ProviderForm({
  kind,
  initialCommon,
  initialValues,
  stored,
  editing,
  readOnly,
  showOwnerPolicy,
  ownerPolicyLabel,
  top,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  kind: KindDef;
  initialCommon: Common;
  initialValues: Values;
  /** The view's configuration: which secrets are stored. */
  stored?: Record<string, unknown>;
  editing: boolean;
  readOnly: boolean;
  showOwnerPolicy: boolean;
  ownerPolicyLabel: string;
  /** Inputs above the name (the owner on create). */
  top?: ReactNode;
  submitLabel: string;
  pending: boolean;
  error: FormError;
  onSubmit: (common: Common, values: Values) => void;
}) {
  const t = useT(messages);
  const [common, setCommon] = useState(initialCommon);
  const [values, setValues] = useState(initialValues);
  const setC = <K extends keyof Common>(k: K, v: Common[K]) => setCommon((o) => ({ ...o, [k]: v }));
  const setV = (k: string, v: string | boolean) => setValues((o) => ({ ...o, [k]: v }));
  const str = (k: string) => String(values[k] ?? "");
  const secretHint = (f: FieldDef) => {
    if (!editing) return t("secretWriteOnly");
    if (stored?.[f.has ?? ""] === true) return f.kind === "secretArea" ? t("privateKeyStored") : t("secretStored");
    return t("secretNone");
  };
  const input = (f: FieldDef) => {
    const name = `idp.config.${f.proto}`;
    switch (f.kind) {
      case "bool":
        return <Checkbox key={f.key} label={t(f.label)} name={name} checked={values[f.key] === true} onChange={(x) => setV(f.key, x)} />;
      case "enum":
        return (
          <Select
            key={f.key}
            label={t(f.label)}
            name={name}
            value={str(f.key)}
            onChange={(x) => setV(f.key, x)}
            options={(f.options ?? []).map((o) => ({ value: String(o.value), label: t(o.label) }))}
            error={error}
          />
        );
      case "textarea":
      case "secretArea":
        return (
          <TextArea
            key={f.key}
            label={t(f.label)}
            name={name}
            value={str(f.key)}
            onChange={(e) => setV(f.key, e.target.value)}
            error={error}
            hint={f.kind === "secretArea" ? secretHint(f) : f.hint && t(f.hint)}
            spellCheck={false}
            autoComplete="off"
          />
        );
      case "secret":
        return (
          <Field
            key={f.key}
            label={t(f.label)}
            name={name}
            type="password"
            autoComplete="new-password"
            value={str(f.key)}
            onChange={(e) => setV(f.key, e.target.value)}
            error={error}
            hint={secretHint(f)}
          />
        );
      case "seconds":
        return (
          <Field
            key={f.key}
            label={t(f.label)}
            name={name}
            type="number"
            min={0}
            max={60}
            inputMode="numeric"
            value={str(f.key)}
            onChange={(e) => setV(f.key, e.target.value)}
            error={error}
            hint={f.hint && t(f.hint)}
          />
        );
      case "tenant":
        return (
          <div key={f.key}>
            <Select
              label={t("tenant")}
              name="idp.config.tenant.tenant_type"
              value={str("tenant.mode")}
              onChange={(x) => setV("tenant.mode", x)}
              options={[...TENANT_TYPES.map((o) => ({ value: String(o.value), label: t(o.label) })), { value: "single", label: t("tenantSingle") }]}
              error={error}
            />
            {str("tenant.mode") === "single" && (
              <Field
                label={t("tenantId")}
                name="idp.config.tenant.tenant_id"
                value={str("tenant.id")}
                onChange={(e) => setV("tenant.id", e.target.value)}
                error={error}
                required
              />
            )}
          </div>
        );
      case "attributes":
        return (
          <fieldset key={f.key}>
            <legend>{t("attributes")}</legend>
            <p className="hint">{t("attributesHint")}</p>
            {LDAP_ATTRIBUTES.map(([k, p, label]) => (
              <Field
                key={k}
                label={t(label)}
                name={`idp.config.attributes.${p}`}
                value={str(`attributes.${k}`)}
                onChange={(e) => setV(`attributes.${k}`, e.target.value)}
                error={error}
                autoComplete="off"
                spellCheck={false}
              />
            ))}
          </fieldset>
        );
      default:
        return (
          <Field
            key={f.key}
            label={t(f.label)}
            name={name}
            type={f.kind === "url" ? "url" : "text"}
            value={str(f.key)}
            onChange={(e) => setV(f.key, e.target.value)}
            error={error}
            hint={f.hint && t(f.hint)}
            required={f.required}
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
          />
        );
    }
  };
  return (
    <form
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        onSubmit(common, values);
      }}
    >
      <ErrorText error={error} fields={fieldNames(kind)} />
      <ReadOnly when={readOnly}>
        <section className="card">
          <h2>{t("general")}</h2>
          {top}
          <Field
            label={t("name")}
            name="idp.idp.name"
            value={common.name}
            onChange={(e) => setC("name", e.target.value)}
            error={error}
            hint={t("nameHint")}
            required
          />
          {showOwnerPolicy && (
            <Select
              label={ownerPolicyLabel}
              name="idp.idp.state_policy"
              value={String(common.ownerPolicy)}
              onChange={(x) => setC("ownerPolicy", Number(x) as StatePolicy)}
              options={[
                { value: String(StatePolicy.ACTIVATE), label: t("policyActivate") },
                { value: String(StatePolicy.DEACTIVATE), label: t("policyDeactivate") },
              ]}
              error={error}
            />
          )}
        </section>
        <section className="card">
          <h2>{t("accountOptions")}</h2>
          <p className="hint">{t("accountOptionsHint")}</p>
          <Checkbox
            label={t("isLinkingAllowed")}
            name="idp.idp.options.is_linking_allowed"
            checked={common.isLinkingAllowed}
            onChange={(x) => setC("isLinkingAllowed", x)}
          />
          <Checkbox
            label={t("isCreationAllowed")}
            name="idp.idp.options.is_creation_allowed"
            checked={common.isCreationAllowed}
            onChange={(x) => setC("isCreationAllowed", x)}
          />
          <Checkbox
            label={t("isAutoCreation")}
            name="idp.idp.options.is_auto_creation"
            checked={common.isAutoCreation}
            onChange={(x) => setC("isAutoCreation", x)}
          />
          <Checkbox label={t("isAutoUpdate")} name="idp.idp.options.is_auto_update" checked={common.isAutoUpdate} onChange={(x) => setC("isAutoUpdate", x)} />
          <Select
            label={t("autoLinking")}
            name="idp.idp.options.auto_linking"
            value={String(common.autoLinking)}
            onChange={(x) => setC("autoLinking", Number(x) as AutoLinkingOption)}
            options={[
              { value: String(AutoLinkingOption.UNSPECIFIED), label: t("autoLinkingNone") },
              { value: String(AutoLinkingOption.USERNAME), label: t("autoLinkingUsername") },
              { value: String(AutoLinkingOption.EMAIL), label: t("autoLinkingEmail") },
            ]}
            error={error}
          />
        </section>
        <section className="card">
          <h2>{t("configuration")}</h2>
          {kind.fields.map(input)}
        </section>
        {!readOnly && (
          <div className="buttons">
            <button type="submit" className="primary" disabled={pending}>
              {submitLabel}
            </button>
          </div>
        )}
      </ReadOnly>
    </form>
  );
}

/** How an owner is named: this organization, another one, the instance, the system. */
export function ownerName(t: (k: keyof (typeof messages)["en"], v?: Record<string, string | number>) => string, owner: Owner | undefined, orgId: string) {
  switch (owner?.type) {
    case OwnerType.SYSTEM:
      return t("ownerSystem");
    case OwnerType.INSTANCE:
      return t("ownerInstance");
    default:
      return owner?.id === orgId ? t("ownerOrg") : t("ownerOtherOrg", { id: owner?.id ?? "" });
  }
}
