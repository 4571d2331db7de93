import { createPublicKey, type KeyObject } from "node:crypto";
import type { Application, User } from "../../gen/prisma/client.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readFrom, readRow } from "./sources.js";

/** An application as a client of the OAuth endpoints: it may act only while its project is active too. */
export type ApplicationClientRow = { app: Application; projectActive: boolean };

/**
 * Applications and machine users as the OIDC provider reads its clients, and their public keys. Read once
 * until the next committed event: every token request reads its client, most check a key.
 */
export class OAuthClientQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
    /** The time keys expire by. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** An application by its client ID. */
  application(instanceId: string, clientId: string): Promise<ApplicationClientRow | undefined> {
    return this.cache.get(
      `oauth-app:${instanceId}:${clientId}`,
      async () => {
        const app = await this.db.reads.prisma.application.findUnique({ where: { instanceId_clientId: { instanceId, clientId } } });
        if (!app) return undefined;
        const project = await this.db.reads.prisma.project.findUnique({ where: { id: app.projectId }, select: { state: true } });
        return { app, projectActive: project?.state === "active" };
      },
      readFrom("application", "project"),
    );
  }

  /** A machine user by its username (client credentials) or ID (JWT profile). */
  machine(instanceId: string, by: { username?: string; userId?: string }): Promise<User | null> {
    return this.cache.get(
      `oauth-machine:${instanceId}:${by.username ?? ""}:${by.userId ?? ""}`,
      () =>
        this.db.reads.prisma.user.findFirst({
          where: { instanceId, kind: "machine", ...(by.userId ? { id: by.userId } : { loginName: (by.username ?? "").toLowerCase() }) },
        }),
      by.userId ? readRow("user", by.userId) : readFrom("user"),
    );
  }

  /**
   * The public keys of a machine user or an application that have not expired, by key ID, parsed once (the
   * JWT profile grant and client assertions check one per request).
   */
  async verificationKeys(owner: { userId: string } | { applicationId: string }): Promise<(kid: string) => KeyObject | undefined> {
    const id = "userId" in owner ? `user:${owner.userId}` : `app:${owner.applicationId}`;
    const keys = await this.cache.get(
      `verification-keys:${id}`,
      async () => {
        const rows =
          "userId" in owner
            ? await this.db.reads.prisma.machineKey.findMany({ where: { userId: owner.userId } })
            : await this.db.reads.prisma.applicationKey.findMany({ where: { applicationId: owner.applicationId } });
        return rows.map((r) => ({ id: r.id, expiresAt: r.expiresAt, key: createPublicKey(r.publicKey) }));
      },
      "userId" in owner ? readRow("machineKey", owner.userId) : readRow("applicationKey", owner.applicationId),
    );
    const now = this.clock.now();
    return (kid) => keys.find((k) => k.id === kid && (!k.expiresAt || k.expiresAt.getTime() > now))?.key;
  }
}
