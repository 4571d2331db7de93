import * as events from "../events/index.js";
import { credentialRow, defineProjection } from "./projection.js";
import { appsOfProjects, projectsOfOrg } from "./related.js";

/** Applications' key pairs: only the public key is stored. */
export const applicationKeys = defineProjection("applicationKey", 1, (on) => {
  on(events.appKeyAdded, async (tx, e) => {
    await tx.applicationKey.create({ data: { ...credentialRow(e, e.payload.keyId), applicationId: e.aggregateId, publicKey: e.payload.publicKey } });
  });
  on(events.appKeyRemoved, async (tx, e) => {
    await tx.applicationKey.deleteMany({ where: { id: e.payload.keyId, applicationId: e.aggregateId } });
  });
  on(events.appRemoved, async (tx, e) => {
    await tx.applicationKey.deleteMany({ where: { applicationId: e.aggregateId } });
  });
  // Reads the project's applications: before applications.
  on(events.projectRemoved, async (tx, e) => {
    await tx.applicationKey.deleteMany({ where: { applicationId: { in: await appsOfProjects(tx, [e.aggregateId]) } } });
  });
  // Reads the organisation's projects and their applications: before applications and projects.
  on(events.orgRemoved, async (tx, e) => {
    await tx.applicationKey.deleteMany({ where: { applicationId: { in: await appsOfProjects(tx, await projectsOfOrg(tx, e.aggregateId)) } } });
  });
});
