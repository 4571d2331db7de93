import type { EventWriter, NewEvent } from "../eventstore/eventstore.js";
import type { OidcConfig } from "../domain/applications.js";
import { CONSOLE_APP_NAME, CONSOLE_CALLBACK_PATH, CONSOLE_PATH, CONSOLE_PROJECT_NAME } from "../domain/console.js";
import { oidcAppAdded, projectAdded } from "../events/index.js";
import { newId } from "../ids.js";
import { SYSTEM_CREATOR } from "../domain/system.js";

/**
 * The admin console's OAuth client (docs/contract.md "Admin console"): the application `console` of the instance's
 * first project, a public client (PKCE) whose redirect URIs are paths on the issuer the browser came through (one
 * registration serves every domain, port and scheme of the instance: docs/decisions.md "Console").
 */
export const consoleOidcConfig: OidcConfig = {
  redirectUris: [CONSOLE_CALLBACK_PATH],
  postLogoutRedirectUris: [CONSOLE_PATH],
  responseTypes: ["code"],
  grantTypes: ["authorization_code", "refresh_token"],
  appType: "user_agent",
  authMethod: "none",
  accessTokenType: "jwt",
  // the console greets its user by name from the ID token
  idTokenUserinfoAssertion: true,
  accessTokenRoleAssertion: false,
  idTokenRoleAssertion: false,
  devMode: false,
  clockSkewMs: 0,
};

/** The events of the console's project and application in the organisation orgId of a new instance. */
export function consoleAppEvents(orgId: string, projectName = CONSOLE_PROJECT_NAME): NewEvent[] {
  const projectId = newId();
  const appId = newId();
  return [
    projectAdded.event({ aggregateId: projectId, resourceOwner: orgId }, { name: projectName, projectRoleAssertion: false, projectRoleCheck: false }),
    oidcAppAdded.event(
      { aggregateId: appId, resourceOwner: orgId },
      { projectId, name: CONSOLE_APP_NAME, clientId: `${appId}@console`, secretHash: null, config: consoleOidcConfig },
    ),
  ];
}

/**
 * Instances made before there was a console get its project and application in their default organisation, once:
 * an instance with an application ever named `console` is left alone (its administrators may have removed or
 * renamed it since).
 */
export async function ensureConsoleApps(w: EventWriter): Promise<void> {
  const made = await w.tx.event.findMany({
    where: { type: oidcAppAdded.type, payload: { path: ["name"], equals: CONSOLE_APP_NAME } },
    select: { instanceId: true },
  });
  const without = await w.tx.instance.findMany({
    where: { id: { notIn: made.map((e) => e.instanceId) }, defaultOrgId: { not: null } },
    select: { id: true, defaultOrgId: true },
  });
  for (const instance of without) {
    // an older project of that name keeps it: ours is told apart by its application
    const taken = await w.tx.project.findFirst({ where: { orgId: instance.defaultOrgId!, name: CONSOLE_PROJECT_NAME }, select: { id: true } });
    await w.push(instance.id, SYSTEM_CREATOR, consoleAppEvents(instance.defaultOrgId!, taken ? `${CONSOLE_PROJECT_NAME} console` : CONSOLE_PROJECT_NAME));
  }
}
