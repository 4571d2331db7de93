import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  FeatureFlagSchema,
  type FeatureService,
  GetFeaturesResponseSchema,
  SetFeaturesResponseSchema,
  SetInstanceFeaturesRequestSchema,
  SetOrganizationFeaturesRequestSchema,
  SetSystemFeaturesRequestSchema,
  Source,
} from "../../../gen/svc/feature/v2/feature_service_pb.js";
import { featureNames, type FeatureName } from "../../domain/settings-kinds.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { SettingsQueries } from "../../query/settings.js";
import { assertMatches, carriedBy, readSettings, setSettings, type SettingsRequest } from "../settings-properties.js";

const sources = { system: Source.SYSTEM, instance: Source.INSTANCE, org: Source.ORGANIZATION } as const;

/**
 * Feature flags: the "feature" kind of settings, one RPC per level (the authorization interceptor takes the
 * level from the RPC's permission or `organization_id`). A flag is a field named as its property: an optional
 * bool to set, a FeatureFlag to read (the built-in value's source is DEFAULT rather than the system).
 */
export function featureService(deps: { es: EventStore; settings: SettingsQueries }): ServiceImpl<typeof FeatureService> {
  for (const desc of [SetSystemFeaturesRequestSchema, SetInstanceFeaturesRequestSchema, SetOrganizationFeaturesRequestSchema]) {
    assertMatches("feature", desc, (f) => f, { others: ["organization_id"] });
  }
  assertMatches("feature", GetFeaturesResponseSchema, carriedBy("enabled"), { others: ["details"] });
  // The field of each flag, as the generated messages name it (the same in every message: checked above).
  const fieldOf = new Map(GetFeaturesResponseSchema.fields.map((f) => [f.name, f.localName]));
  const field = (name: FeatureName) => fieldOf.get(name)!;

  async function change(ctx: HandlerContext, request: SettingsRequest<"feature">) {
    return create(SetFeaturesResponseSchema, { details: await setSettings(ctx, deps.es, "feature", request, (name) => name) });
  }
  // Absent flags are left as they are.
  const set = (req: object, ctx: HandlerContext) => {
    const given = featureNames.map((name) => [name, (req as Record<string, unknown>)[field(name)]] as const).filter(([, v]) => v !== undefined);
    return change(ctx, Object.fromEntries(given.map(([name, v]) => [name, { set: v }])));
  };
  const reset = (ctx: HandlerContext) => change(ctx, Object.fromEntries(featureNames.map((name) => [name, { reset: true }])));
  async function get(ctx: HandlerContext) {
    const { values, details } = await readSettings(ctx, deps.settings, "feature");
    const flags = featureNames.map((name) => {
      const v = values.get(name)!;
      return [field(name), create(FeatureFlagSchema, { enabled: v.value === true, source: v.builtIn ? Source.DEFAULT : sources[v.owner.type] })];
    });
    return create(GetFeaturesResponseSchema, { details, ...Object.fromEntries(flags) });
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
