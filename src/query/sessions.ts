import type { LoginSession, Prisma as P } from "../../gen/prisma/client.js";
import type { ListDetails } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import type { SessionSearchFilter } from "../../gen/svc/resources/session/v3alpha/session_service_pb.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, type SearchRequest, type Searchable } from "./list.js";
import { readRow, tableSources } from "./sources.js";

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

/** A session with what the sessions API shows of its user. */
export interface SessionWithUser {
  row: LoginSession;
  user: { loginName: string; orgId: string } | undefined;
}

const sessions: Searchable<SessionSearchFilter, P.LoginSessionWhereInput, P.LoginSessionOrderByWithRelationInput, LoginSession> = {
  table: "loginSession",
  sources: tableSources.loginSession,
  filters: {
    inIds: (v) => ({ id: { in: v.ids } }),
    userId: (v) => ({ userId: v }),
  },
  defaultSort: "createdAt",
  tieBreaker: ["id"],
};

/** The sessions API's reads: every session of the instance (of the API and of browsers), newest first by default. */
export class SessionSearch {
  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
  ) {}

  async search(instanceId: string, req: SearchRequest<SessionSearchFilter, number>): Promise<{ rows: SessionWithUser[]; details: ListDetails }> {
    const { rows, details } = await search(this.db, this.cache, sessions, [{ instanceId }], req);
    return { rows: await this.withUsers(rows), details };
  }

  async byIds(instanceId: string, ids: string[]): Promise<SessionWithUser[]> {
    return this.withUsers(await this.db.prisma.loginSession.findMany({ where: { instanceId, id: { in: ids } } }));
  }

  private async withUsers(rows: LoginSession[]): Promise<SessionWithUser[]> {
    const users = await this.db.prisma.user.findMany({
      where: { id: { in: [...new Set(rows.map((r) => r.userId))] } },
      select: { id: true, loginName: true, orgId: true },
    });
    const byId = new Map(users.map((u) => [u.id, u]));
    return rows.map((row) => ({ row, user: byId.get(row.userId) }));
  }
}
