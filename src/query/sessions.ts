import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";

/** A browser's session of one user, as the OIDC provider reads it. */
export interface BrowserSession {
  id: string;
  userId: string;
  authTime: Date;
}

/** Reads of browser sessions (the login UI signs them in; access tokens and refresh tokens are bound to them). */
export class SessionQueries {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  /** Whether the session still exists (logout ends it); every token check of a session's token asks. */
  active(sessionId: string): Promise<boolean> {
    return this.cache.get(
      `session-active:${sessionId}`,
      async () => !!(await this.db.prisma.loginSession.findUnique({ where: { id: sessionId }, select: { id: true } })),
    );
  }

  /** The sessions of a browser (by the hash of its agent cookie) in the instance whose users may sign in, newest first. */
  async ofBrowser(instanceId: string, agentHash: string): Promise<BrowserSession[]> {
    const sessions = await this.db.prisma.loginSession.findMany({ where: { instanceId, agentHash }, orderBy: { authTime: "desc" } });
    const active = await this.db.prisma.user.findMany({ where: { id: { in: sessions.map((x) => x.userId) }, state: "active" }, select: { id: true } });
    return sessions.filter((x) => active.some((u) => u.id === x.userId));
  }
}
