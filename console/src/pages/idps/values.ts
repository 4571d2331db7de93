// An identity provider's data as the form holds it and as the requests send it: the RPCs of its kind, the common
// part (name, state policy, account options), the kind's configuration (kinds.ts) read into the form's values and
// written back (secrets only when typed), and the request fields the form has inputs for.
import { create } from "@bufbuild/protobuf";
import type { DescMessage, DescMethodUnary } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { AutoLinkingOption, type IDP } from "../../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { IdentityProviderService } from "../../../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import type { Details, Parent, State } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { StatePolicy } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { type KindDef, LDAP_ATTRIBUTES } from "./kinds";

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
