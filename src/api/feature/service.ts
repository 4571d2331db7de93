import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  FeatureFlagSchema,
  FeatureService,
  GetFeaturesResponseSchema,
  SetFeaturesResponseSchema,
  Source,
} from "../../../gen/svc/feature/v2/feature_service_pb.js";
import { callInfo, ownerOf } from "../../authz/context.js";
import { changeSettings, type SettingsChange } from "../../command/settings.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { chainOfTarget, featureNames, type FeatureQueries } from "../../query/features.js";
import type { SettingsQueries } from "../../query/settings.js";
import { toSettingsDetails } from "../convert.js";

const sources = { system: Source.SYSTEM, instance: Source.INSTANCE, org: Source.ORGANIZATION } as const;

type FlagFields = { multitenancyResourcesApi?: boolean; multitenancySettings?: boolean; oidcTokenExchange?: boolean };
const fieldOf = { multitenancy_resources_api: "multitenancyResourcesApi", multitenancy_settings: "multitenancySettings", oidc_token_exchange: "oidcTokenExchange" } as const;

/** The level each RPC acts on comes from the authorization interceptor (system / instance / organization_id). */
export function featureService(deps: { es: EventStore; features: FeatureQueries; settings: SettingsQueries }): ServiceImpl<typeof FeatureService> {
  async function change(ctx: HandlerContext, change: SettingsChange) {
    const info = callInfo(ctx);
    const details = await changeSettings(deps.es, {
      kind: "feature",
      instanceId: info.target.instance.id,
      owner: ownerOf(info.target),
      creator: info.caller.userId,
      change,
    });
    return create(SetFeaturesResponseSchema, { details: toSettingsDetails(details) });
  }
  const set = (req: FlagFields, ctx: HandlerContext) => {
    const values: Record<string, unknown> = {};
    for (const name of featureNames) {
      const v = req[fieldOf[name]];
      if (v !== undefined) values[name] = v;
    }
    return change(ctx, { set: values, reset: [] });
  };
  const reset = (ctx: HandlerContext) => change(ctx, { set: {}, reset: [...featureNames] });
  async function get(ctx: HandlerContext) {
    const { target } = callInfo(ctx);
    const owner = ownerOf(target);
    const [values, own] = await Promise.all([deps.features.resolve(chainOfTarget(target)), deps.settings.row("feature", owner)]);
    const flags = Object.fromEntries(
      featureNames.map((name) => {
        const v = values.get(name);
        const source = v?.from ? sources[v.from.type] : Source.DEFAULT;
        return [fieldOf[name], create(FeatureFlagSchema, { enabled: v?.value === true, source })];
      }),
    );
    return create(GetFeaturesResponseSchema, {
      details: toSettingsDetails({ sequence: own?.sequence ?? 0, changeDate: own?.changeDate, owner }),
      ...flags,
    });
  }
  return {
    setSystemFeatures: set,
    setInstanceFeatures: set,
    setOrganizationFeatures: set,
    resetSystemFeatures: (_req, ctx) => reset(ctx),
    resetInstanceFeatures: (_req, ctx) => reset(ctx),
    resetOrganizationFeatures: (_req, ctx) => reset(ctx),
    getSystemFeatures: (_req, ctx) => get(ctx),
    getInstanceFeatures: (_req, ctx) => get(ctx),
    getOrganizationFeatures: (_req, ctx) => get(ctx),
  };
}
