import type { Prisma } from "../../gen/prisma/client.js";
import type { ApiConfig, OidcConfig } from "../domain/applications.js";
import type { StoredEvent, Tx } from "../eventstore/eventstore.js";
import * as events from "../events/index.js";
import { defineProjection } from "./projection.js";
import { appsOfProjects, projectsOfOrg } from "./related.js";

/** The row follows its aggregate's sequence, which every event of it advances (its keys' too). */
const touch = async (tx: Tx, e: StoredEvent<object>, data: Prisma.ApplicationUpdateInput = {}) => {
  await tx.application.update({ where: { id: e.aggregateId }, data: { ...data, sequence: e.sequence, changeDate: e.createdAt } });
};

const add = async (tx: Tx, e: StoredEvent<events.AppAdded<OidcConfig | ApiConfig>>, kind: "oidc" | "api") => {
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
  on(events.oidcAppAdded, (tx, e) => add(tx, e, "oidc"));
  on(events.apiAppAdded, (tx, e) => add(tx, e, "api"));
  on(events.appChanged, (tx, e) => touch(tx, e, { name: e.payload.name, config: e.payload.config }));
  on(events.appDeactivated, (tx, e) => touch(tx, e, { state: "inactive" }));
  on(events.appReactivated, (tx, e) => touch(tx, e, { state: "active" }));
  on(events.appSecretSet, (tx, e) => touch(tx, e, { secretHash: e.payload.secretHash }));
  on(events.appRemoved, async (tx, e) => {
    await tx.application.delete({ where: { id: e.aggregateId } });
  });
  on(events.appKeyAdded, (tx, e) => touch(tx, e));
  on(events.appKeyRemoved, (tx, e) => touch(tx, e));
  on(events.projectRemoved, async (tx, e) => {
    await tx.application.deleteMany({ where: { projectId: e.aggregateId } });
  });
  // Reads the organisation's projects and their applications: before projects.
  on(events.orgRemoved, async (tx, e) => {
    const apps = await appsOfProjects(tx, await projectsOfOrg(tx, e.aggregateId));
    await tx.application.deleteMany({ where: { id: { in: apps } } });
  });
});
