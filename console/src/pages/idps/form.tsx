// The form of an identity provider of any kind: its name, state policy where it is defined, account options and the
// kind's configuration (kinds.ts), for creating and for changing (values.ts reads and writes its values). Secrets are
// write-only: the inputs start empty and a change sends a secret only when one is typed.
import { type FormEvent, type ReactNode, useState } from "react";
import { type Owner, OwnerType } from "../../../../gen/svc/object/v3alpha/object_pb.js";
import { AutoLinkingOption } from "../../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { StatePolicy } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useT } from "../../i18n";
import { messages } from "../../i18n/idps";
import { Checkbox, ErrorText, Field, type FormError, ReadOnly, Select, TextArea } from "../../ui";
import { type FieldDef, type KindDef, LDAP_ATTRIBUTES, TENANT_TYPES } from "./kinds";
import { type Common, fieldNames, type Values } from "./values";

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
            rows={6}
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
