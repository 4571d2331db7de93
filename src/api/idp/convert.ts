import { create, fromJson, type JsonObject, type JsonValue, type Message, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { OwnerSchema, OwnerType } from "../../../gen/svc/object/v3alpha/object_pb.js";
import { GetIDPSchema, IDPSchema, OptionsSchema, type Options } from "../../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { DetailsSchema, ParentSchema, State, StatePolicy } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { Target } from "../../authz/context.js";
import type { IdpDetails } from "../../command/idps.js";
import { errors } from "../../errors/errors.js";
import type { IdpListRow, IdpView } from "../../query/idps.js";
import type { ContextRef, Policy } from "../../query/reuse.js";
import { type KindMessages, viewOfConfig } from "./kinds.js";

const ownerTypes = { system: OwnerType.SYSTEM, instance: OwnerType.INSTANCE, org: OwnerType.ORG } as const;
export const toOwner = (c: ContextRef) => create(OwnerSchema, { type: ownerTypes[c.type], id: c.id });

export function refOfTarget(t: Target): ContextRef {
  if (t.type === "system") return { type: "system", id: "", instanceId: "" };
  if (t.type === "instance") return { type: "instance", id: t.instance.id, instanceId: t.instance.id };
  return { type: "org", id: t.org.id, instanceId: t.instance.id };
}

const policies: Record<Policy, StatePolicy> = { activate: StatePolicy.ACTIVATE, deactivate: StatePolicy.DEACTIVATE, inherit: StatePolicy.INHERIT };

export function policyOf(p: StatePolicy, field: string): Policy | undefined {
  switch (p) {
    case StatePolicy.ACTIVATE:
      return "activate";
    case StatePolicy.DEACTIVATE:
      return "deactivate";
    case StatePolicy.INHERIT:
      return "inherit";
    default:
      if (p === StatePolicy.UNSPECIFIED) return undefined;
      throw errors.invalidArgument("IDP-p0l1", `invalid ${field}: unknown state policy`);
  }
}

export const optionsToJson = (o: Options | undefined) => (o ? (toJson(OptionsSchema, o) as Record<string, unknown>) : {});
const optionsFromJson = (j: unknown) => fromJson(OptionsSchema, (j ?? {}) as JsonValue);

export function toDetails(d: IdpDetails) {
  return create(DetailsSchema, { id: d.id, sequence: BigInt(d.sequence), changeDate: timestampFromDate(d.changeDate), resourceOwner: toOwner(d.owner) });
}

function common(v: IdpView<IdpListRow>) {
  return {
    details: toDetails({ id: v.row.id, sequence: v.row.sequence, changeDate: v.row.changeDate, owner: v.owner }),
    ...(v.parent
      ? {
          parent: create(ParentSchema, {
            parent: toOwner(v.parent.context),
            state: v.parent.active ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE,
          }),
        }
      : {}),
    state: v.active ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE,
    type: v.row.type,
  };
}

const idpOf = (v: IdpView<IdpListRow>) => create(IDPSchema, { name: v.row.name, statePolicy: policies[v.policy], options: optionsFromJson(v.row.options) });

export const toGetIdp = (v: IdpView<IdpListRow>) => create(GetIDPSchema, { ...common(v), idp: idpOf(v) });

/** A get of a provider of kind `k`: the common part, its configuration without the secret, where to register it. */
export function toGetKind(k: KindMessages, v: IdpView, urls: { callbackUrl: string; serviceProviderMetadataUrl?: string }): Message {
  const view = create(k.view, { idp: idpOf(v), config: viewOfConfig(k, v.row.config as JsonObject, v.row.secret !== null) });
  return create(k.get, { ...common(v), idp: view, ...urls });
}
