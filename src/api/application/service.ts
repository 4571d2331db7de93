import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  AddApplicationKeyResponseSchema,
  type ApplicationService,
  CreateApplicationResponseSchema,
  DeactivateApplicationResponseSchema,
  DeleteApplicationResponseSchema,
  GenerateApplicationSecretResponseSchema,
  GetApplicationResponseSchema,
  ListApplicationKeysResponseSchema,
  PatchApplicationResponseSchema,
  ReactivateApplicationResponseSchema,
  RemoveApplicationKeyResponseSchema,
  SearchApplicationsResponseSchema,
} from "../../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import { callInfo } from "../../authz/context.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import * as apps from "../../command/applications.js";
import type { Clock } from "../../domain/clock.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { ApplicationQueries } from "../../query/applications.js";
import type { ProjectionCache } from "../../query/cache.js";
import { ProjectQueries } from "../../query/projects.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";
import { listDetails, listWindow } from "../list.js";
import { authorizeInProject, loadAuthorized, readableScope } from "../scope.js";
import { appConfigOf, toGetApplication } from "./convert.js";
import { applicationSearchOf } from "./search.js";

export interface ApplicationDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  tenancy: TenancyQueries;
  /** The time expirations are checked against (src/domain/clock.ts). */
  clock: Clock;
}

export function applicationService(deps: ApplicationDeps): ServiceImpl<typeof ApplicationService> {
  const { es, tenancy } = deps;
  const applications = new ApplicationQueries(deps.db, deps.cache);
  const projects = new ProjectQueries(deps.db, deps.cache);
  const details = (d: ChangeDetails) => toResourceDetails(d, "org");

  /** The application a request names, checked in its project's organisation or through a project membership. */
  async function resolve(ctx: HandlerContext, id: string) {
    const notFound = () => errors.notFound("APP-n0t1", `application "${id}" not found`);
    const { row, args } = await loadAuthorized(
      ctx,
      tenancy,
      id,
      (i) => applications.byId(i, id),
      notFound,
      (a) => a,
    );
    return { app: row, args };
  }

  const expiryOf = (t: Parameters<typeof timestampDate>[0] | undefined) => {
    if (!t) return null;
    const d = timestampDate(t);
    if (d.getTime() <= deps.clock.now()) throw errors.invalidArgument("APP-3xp1", "invalid expiration_date: must be in the future");
    return d;
  };

  return {
    async createApplication(req, ctx) {
      const info = callInfo(ctx);
      const project = await projects.byId(info.target.instance.id, req.projectId);
      if (!project) throw errors.notFound("APP-pr0j", `project "${req.projectId}" not found`);
      await authorizeInProject(info, tenancy, project.orgId, project.id, info.permission);
      const a = req.application!;
      const r = await apps.createApplication(es, {
        instanceId: project.instanceId,
        projectId: project.id,
        creator: info.caller.userId,
        name: a.name,
        config: appConfigOf(a.type as never),
      });
      return create(CreateApplicationResponseSchema, { details: details(r.details), clientId: r.clientId, clientSecret: r.clientSecret ?? "" });
    },

    async patchApplication(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const p = req.application!;
      const d = await apps.patchApplication(es, {
        ...args,
        ...(p.name !== undefined ? { name: p.name } : {}),
        ...(p.type.case ? { config: appConfigOf(p.type as never) } : {}),
      });
      return create(PatchApplicationResponseSchema, { details: details(d) });
    },

    async getApplication(req, ctx) {
      const { app } = await resolve(ctx, req.id);
      return create(GetApplicationResponseSchema, { application: toGetApplication(app) });
    },

    async deleteApplication(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeleteApplicationResponseSchema, { details: details(await apps.removeApplication(es, args)) });
    },

    async searchApplications(req, ctx) {
      const info = callInfo(ctx);
      const page = await applications.search(info.target.instance.id, readableScope(info, "project.app.read"), applicationSearchOf(req), listWindow(req.query));
      return create(SearchApplicationsResponseSchema, { details: listDetails(page), result: page.rows.map(toGetApplication) });
    },

    async deactivateApplication(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeactivateApplicationResponseSchema, { details: details(await apps.setApplicationState(es, { ...args, active: false })) });
    },

    async reactivateApplication(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(ReactivateApplicationResponseSchema, { details: details(await apps.setApplicationState(es, { ...args, active: true })) });
    },

    async generateApplicationSecret(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const r = await apps.generateApplicationSecret(es, args);
      return create(GenerateApplicationSecretResponseSchema, { details: details(r.details), clientId: r.clientId, clientSecret: r.clientSecret });
    },

    async addApplicationKey(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const r = await apps.addApplicationKey(es, { ...args, expiresAt: expiryOf(req.expirationDate) });
      return create(AddApplicationKeyResponseSchema, { details: details(r.details), keyId: r.keyId, keyContent: r.keyContent });
    },

    async listApplicationKeys(req, ctx) {
      const { app } = await resolve(ctx, req.id);
      const keys = await applications.keysOf(app.id);
      return create(ListApplicationKeysResponseSchema, {
        result: keys.map((k) => ({
          id: k.id,
          creationDate: timestampFromDate(k.createdAt),
          ...(k.expiresAt ? { expirationDate: timestampFromDate(k.expiresAt) } : {}),
        })),
      });
    },

    async removeApplicationKey(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(RemoveApplicationKeyResponseSchema, { details: details(await apps.removeApplicationKey(es, { ...args, keyId: req.keyId })) });
    },
  };
}
