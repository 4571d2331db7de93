import { CONSOLE_APP_NAME } from "../domain/console.js";
import { oidcAppAdded } from "../events/index.js";
import type { Database } from "../storage/database.js";

/**
 * The client ID of an instance's admin console (the first application named `console` its events hold: the instance's
 * creation made it, src/command/console-app.ts), while that application exists and is active.
 */
export async function consoleClientId(db: Database, instanceId: string): Promise<string | undefined> {
  const made = await db.reads.prisma.event.findFirst({
    where: { instanceId, type: oidcAppAdded.type, payload: { path: ["name"], equals: CONSOLE_APP_NAME } },
    orderBy: { position: "asc" },
    select: { aggregateId: true },
  });
  if (!made) return undefined;
  const app = await db.reads.prisma.application.findUnique({ where: { id: made.aggregateId }, select: { clientId: true, state: true } });
  return app?.state === "active" ? app.clientId : undefined;
}
