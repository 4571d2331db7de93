import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readRow } from "./sources.js";

/** A browser's session of one user, with what the account chooser shows of the user. */
export interface BrowserSession {
  id: string;
  userId: string;
  authTime: Date;
  /** The methods of the last sign-in (OIDC amr). */
  amr: string[];
  loginName: string;
  displayName: string;
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
      readRow("loginSession", sessionId),
    );
  }

  /**
   * The sessions of a browser (by the hash of its agent cookie) in the instance whose users may sign in, newest
   * first: the login UI's account chooser and the OIDC provider's prompt handling read the same list.
   */
  async ofBrowser(instanceId: string, agentHash: string): Promise<BrowserSession[]> {
    const sessions = await this.db.prisma.loginSession.findMany({ where: { instanceId, agentHash }, orderBy: { authTime: "desc" } });
    const users = await this.db.prisma.user.findMany({
      where: { id: { in: sessions.map((x) => x.userId) }, state: "active" },
      select: { id: true, username: true, displayName: true },
    });
    return sessions.flatMap((x) => {
      const u = users.find((user) => user.id === x.userId);
      return u ? [{ id: x.id, userId: u.id, authTime: x.authTime, amr: x.amr, loginName: u.username, displayName: u.displayName }] : [];
    });
  }
}
