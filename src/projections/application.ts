import type { Prisma } from "../../gen/prisma/client.js";
import type { ApiConfig, OidcConfig } from "../domain/applications.js";
import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import {
  apiAppAdded,
  appChanged,
  appDeactivated,
  appKeyAdded,
  appKeyRemoved,
  appReactivated,
  appRemoved,
  appSecretSet,
  oidcAppAdded,
  orgRemoved,
  projectRemoved,
  type AppAdded,
} from "../events/index.js";
import { defineProjection } from "./projection.js";
import { appsOfProjects, projectsOfOrg } from "./related.js";

/** The row follows its aggregate's sequence, which every event of it advances (its keys' too). */
const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.ApplicationUpdateInput = {}) => {
  await tx.application.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

const add = async (tx: Tx, e: StoredEvent<AppAdded<OidcConfig | ApiConfig>>, kind: "oidc" | "api") => {
  const p = e.payload;
  await tx.application.create({
    data: {
      id: e.aggregateId,
      instanceId: e.instanceId,
      orgId: e.resourceOwner,
      projectId: p.projectId,
      name: p.name,
      kind,
      state: "active",
      clientId: p.clientId,
      secretHash: p.secretHash,
      config: p.config,
      sequence: e.sequence,
      createdAt: e.createdAt,
      changeDate: e.createdAt,
    },
  });
};

/** Applications (OIDC, API) of projects. */
export const applications = defineProjection("application", 1, (on) => {
  on(oidcAppAdded, (tx, e) => add(tx, e, "oidc"));
  on(apiAppAdded, (tx, e) => add(tx, e, "api"));
  on(appChanged, (tx, e) => touch(tx, e, { name: e.payload.name, config: e.payload.config }));
  on(appDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  on(appReactivated, (tx, e) => touch(tx, e, { state: "active" }));
  on(appSecretSet, (tx, e) => touch(tx, e, { secretHash: e.payload.secretHash }));
  on(appRemoved, async (tx, e) => {
    await tx.application.delete({ where: { id: e.aggregateId } });
  });
  on(appKeyAdded, (tx, e) => touch(tx, e));
  on(appKeyRemoved, (tx, e) => touch(tx, e));
  on(projectRemoved, async (tx, e) => {
    await tx.application.deleteMany({ where: { projectId: e.aggregateId } });
  });
  // Reads the organisation's projects and their applications: before projects.
  on(orgRemoved, async (tx, e) => {
    const apps = await appsOfProjects(tx, await projectsOfOrg(tx, e.aggregateId));
    await tx.application.deleteMany({ where: { id: { in: apps } } });
  });
});
