/**
 * Rows of other tables that handlers read to find their own rows, when an event names only an owner: the
 * users and projects of a removed organisation, the applications of a removed project. The removing event
 * deletes these rows too, in their own projections, which index.ts orders after the projections reading them.
 */
import type { Tx } from "../eventstore/eventstore.js";

/** The IDs of the organisation's users. */
export async function usersOfOrg(tx: Tx, orgId: string): Promise<string[]> {
  return (await tx.user.findMany({ where: { orgId }, select: { id: true } })).map((u) => u.id);
}

/** The IDs of the organisation's projects. */
export async function projectsOfOrg(tx: Tx, orgId: string): Promise<string[]> {
  return (await tx.project.findMany({ where: { orgId }, select: { id: true } })).map((p) => p.id);
}

/** The IDs of the applications of these projects. */
export async function appsOfProjects(tx: Tx, projectIds: string[]): Promise<string[]> {
  return (await tx.application.findMany({ where: { projectId: { in: projectIds } }, select: { id: true } })).map((a) => a.id);
}

/** The project grants that go with an organisation: of its projects, and to it. */
export const grantsOfOrg = (orgId: string, projectIds: string[]) => ({ OR: [{ projectId: { in: projectIds } }, { grantedOrgId: orgId }] });
