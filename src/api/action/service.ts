import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type ActionService,
  CreateTargetResponseSchema,
  DeleteExecutionResponseSchema,
  DeleteTargetResponseSchema,
  GetTargetResponseSchema,
  ListAvailableExecutionFunctionsResponseSchema,
  ListAvailableExecutionMethodsResponseSchema,
  ListAvailableExecutionServicesResponseSchema,
  PatchTargetResponseSchema,
  PutExecutionResponseSchema,
  SearchExecutionsResponseSchema,
  SearchTargetsResponseSchema,
} from "../../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { executionIdOf, type ExecutionCatalogue } from "../../domain/conditions.js";
import { callInfo } from "../../authz/context.js";
import { deleteExecution, putExecution } from "../../command/executions.js";
import { createTarget, deleteTarget, patchTarget } from "../../command/targets.js";
import type { TargetAddressPolicy } from "../../domain/target-addresses.js";
import type { SecretBox } from "../../crypto/secrets.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ActionQueries } from "../../query/actions.js";
import type { ProjectionCache } from "../../query/cache.js";
import type { Database } from "../../storage/database.js";
import { HTTP_STATUS_HEADER } from "../../schema/descriptors.js";
import { listDetails, listWindow } from "../list.js";
import { targetChangesOf, targetConfigOf, toDetails, toGetExecution, toGetTarget } from "./convert.js";
import { executionSearchOf, targetSearchOf } from "./search.js";

export interface ActionDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  box: SecretBox;
  actions: ActionQueries;
  catalogue: ExecutionCatalogue;
  /** SVC_TARGET_DENY: where target URLs may not point (default: loopback, private, link-local and unspecified addresses). */
  targetPolicy?: TargetAddressPolicy;
}

/** Targets and executions belong to an instance: the one of the request's context. */
function instanceOf(ctx: HandlerContext) {
  const info = callInfo(ctx);
  if (info.target.type === "org") {
    throw errors.invalidArgument("ACTION-0rg1", "invalid ctx: targets and executions belong to an instance; use ctx.instance_id or ctx.instance_domain");
  }
  return { instanceId: info.target.instance.id, creator: info.caller.userId };
}

export function actionService(deps: ActionDeps): ServiceImpl<typeof ActionService> {
  const { es, actions, catalogue } = deps;

  return {
    async createTarget(req, ctx) {
      const { instanceId, creator } = instanceOf(ctx);
      const { details, signingKey } = await createTarget(es, deps.box, { instanceId, creator, config: targetConfigOf(req.target!), policy: deps.targetPolicy });
      return create(CreateTargetResponseSchema, { details: toDetails(details), signingKey });
    },

    async patchTarget(req, ctx) {
      const { instanceId, creator } = instanceOf(ctx);
      const details = await patchTarget(es, { instanceId, creator, id: req.id, changes: targetChangesOf(req.target!), policy: deps.targetPolicy });
      return create(PatchTargetResponseSchema, { details: toDetails(details) });
    },

    async deleteTarget(req, ctx) {
      const { instanceId, creator } = instanceOf(ctx);
      return create(DeleteTargetResponseSchema, { details: toDetails(await deleteTarget(es, { instanceId, creator, id: req.id })) });
    },

    async getTarget(req, ctx) {
      const { instanceId } = instanceOf(ctx);
      const t = await actions.target(instanceId, req.id);
      if (!t) throw errors.notFound("TARGET-n0t2", `target "${req.id}" not found`);
      return create(GetTargetResponseSchema, { target: toGetTarget(t) });
    },

    async searchTargets(req, ctx) {
      const page = await actions.searchTargets(instanceOf(ctx).instanceId, targetSearchOf(req), listWindow(req.query));
      return create(SearchTargetsResponseSchema, { details: listDetails(page), sortingColumn: req.sortingColumn, result: page.rows.map(toGetTarget) });
    },

    async putExecution(req, ctx) {
      const { instanceId, creator } = instanceOf(ctx);
      const x = req.execution!;
      const { id, type } = executionIdOf(x.condition!, catalogue);
      const { details, created } = await putExecution(es, { instanceId, creator, id, type, targets: x.targets, includes: x.includes });
      ctx.responseHeader.set(HTTP_STATUS_HEADER, created ? "201" : "200");
      return create(PutExecutionResponseSchema, { details: toDetails(details) });
    },

    async deleteExecution(req, ctx) {
      const { instanceId, creator } = instanceOf(ctx);
      return create(DeleteExecutionResponseSchema, { details: toDetails(await deleteExecution(es, { instanceId, creator, id: req.id })) });
    },

    async searchExecutions(req, ctx) {
      const page = await actions.searchExecutions(instanceOf(ctx).instanceId, executionSearchOf(req, catalogue), listWindow(req.query));
      return create(SearchExecutionsResponseSchema, { details: listDetails(page), result: page.rows.map(toGetExecution) });
    },

    async listAvailableExecutionFunctions() {
      return create(ListAvailableExecutionFunctionsResponseSchema, { functions: [...catalogue.functions] });
    },
    async listAvailableExecutionMethods() {
      return create(ListAvailableExecutionMethodsResponseSchema, { methods: catalogue.methods() });
    },
    async listAvailableExecutionServices() {
      return create(ListAvailableExecutionServicesResponseSchema, { services: catalogue.services() });
    },
  };
}
