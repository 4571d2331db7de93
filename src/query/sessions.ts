import type { LoginSession, Prisma as P } from "../../gen/prisma/client.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { search, type ListWindow, type SearchPage, type SearchRequest, type Searchable } from "./list.js";
import { readRow, tableSources } from "./sources.js";
import { TenancyQueries } from "./tenancy.js";

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

/**
 * How long browser sessions last (SVC_SESSION_IDLE, SVC_SESSION_LIFETIME): `idleMs` after their last use, and
 * at most `maxMs` after the last sign-in, however used (Keycloak's SSO Session Idle and Max). Sessions of the
 * sessions API have a lifetime of their own (`expiresAt`, chosen by the login UI that made them).
 */
export interface SessionLifetimes {
  idleMs: number;
  maxMs: number;
}

/** Of a session's row, what decides whether it lives, as the cache keeps it (times in ms). */
interface SessionLife {
  browser: boolean;
  authTime: number;
  expiresAt: number | null;
  usedAt: number | null;
  /** Known to have ended: read again from the database after the cached row said so. */
  ended?: boolean;
}

/** A use is recorded at most this often, and at most ten times per idle lifetime (the idle end is then off by at most a tenth). */
const USE_RECORD_MS = 60_000;

const lifeOf = (row: { tokenHash: string | null; authTime: Date; expiresAt: Date | null; usedAt: Date | null }): SessionLife => ({
  browser: row.tokenHash === null,
  authTime: row.authTime.getTime(),
  expiresAt: row.expiresAt?.getTime() ?? null,
  usedAt: row.usedAt?.getTime() ?? null,
});

const lifeColumns = { tokenHash: true, authTime: true, expiresAt: true, usedAt: true } as const;

/**
 * Reads of browser sessions (the login UI signs them in; access tokens and refresh tokens are bound to them), on
 * the primary: the steps of one sign-in follow each other across processes faster than a replica may replay them.
 */
export class SessionQueries {
  private readonly tenancy: TenancyQueries;

  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
    private readonly lifetimes: SessionLifetimes,
    /** The time of the lifetime decisions when the caller gives none. */
    private readonly clock: Clock = systemClock,
  ) {
    this.tenancy = new TenancyQueries(db, cache);
  }

  /** When the session ends (ms): its own expiry; for a browser session also its idle and absolute lifetimes. */
  private endOf(life: SessionLife): number {
    const own = life.expiresAt ?? Number.POSITIVE_INFINITY;
    if (!life.browser) return own;
    const lastUse = Math.max(life.authTime, life.usedAt ?? 0);
    return Math.min(own, life.authTime + this.lifetimes.maxMs, lastUse + this.lifetimes.idleMs);
  }

  /**
   * The provider the session's user last signed in through (the login UI's `federated`, the sessions API's
   * `idpIntent`), if one did.
   */
  async idpOf(sessionId: string): Promise<string | undefined> {
    const row = await this.db.prisma.loginSession.findUnique({ where: { id: sessionId }, select: { factors: true } });
    const f = (row?.factors ?? {}) as { federated?: { idpId?: unknown }; idpIntent?: { idpId?: unknown } };
    const id = f.federated?.idpId ?? f.idpIntent?.idpId;
    return typeof id === "string" ? id : undefined;
  }

  /** Whether the session exists and has not ended (logout, its expiry, idle or absolute lifetime); every token check of a session's token asks. */
  async active(sessionId: string, now = this.clock.now()): Promise<boolean> {
    return (await this.standing(sessionId, now)).alive;
  }

  /**
   * Whether the session lives, and whether a use now should be recorded (a browser session's idle lifetime
   * starts again with it; `src/command/sessions.ts` `useSession` writes it). The last use is written without an
   * event, so the cached row does not hear of uses recorded by other processes: before calling a session ended
   * for idleness, the row is read again.
   */
  async standing(sessionId: string, now = this.clock.now()): Promise<{ alive: boolean; recordUse: boolean }> {
    const life = await this.life(sessionId);
    if (!life || life.ended) return { alive: false, recordUse: false };
    if (this.endOf(life) <= now) {
      const fresh = await this.db.prisma.loginSession.findUnique({ where: { id: sessionId }, select: { usedAt: true } });
      life.usedAt = Math.max(life.usedAt ?? 0, fresh?.usedAt?.getTime() ?? 0);
      // An end is final: a use is recorded only while the session lives.
      if (!fresh || this.endOf(life) <= now) {
        life.ended = true;
        return { alive: false, recordUse: false };
      }
    }
    const lastUse = Math.max(life.authTime, life.usedAt ?? 0);
    return { alive: true, recordUse: life.browser && now - lastUse >= Math.min(USE_RECORD_MS, this.lifetimes.idleMs / 10) };
  }

  /** Notes in the cached row a use that `useSession` records, so that the uses after it within the interval write nothing. */
  async used(sessionId: string, at: number): Promise<void> {
    const life = await this.life(sessionId);
    if (life) life.usedAt = Math.max(life.usedAt ?? 0, at);
  }

  /** The session's row as far as its lifetime goes, read once until its next event (logout, a new sign-in). */
  private life(sessionId: string): Promise<SessionLife | null> {
    return this.cache.get(
      `session-life:${sessionId}`,
      async () => {
        const row = await this.db.prisma.loginSession.findUnique({ where: { id: sessionId }, select: lifeColumns });
        return row ? lifeOf(row) : null;
      },
      readRow("loginSession", sessionId),
    );
  }

  /**
   * The sessions of a browser (by the hash of its agent cookie) in the instance that have not ended and whose
   * users may act (`usableUser`: active, in an active organisation), newest first: the login UI's account chooser
   * and the OIDC provider's prompt handling (browser SSO) read the same list.
   */
  async ofBrowser(instanceId: string, agentHash: string, now = this.clock.now()): Promise<BrowserSession[]> {
    const rows = await this.db.prisma.loginSession.findMany({ where: { instanceId, agentHash }, orderBy: { authTime: "desc" } });
    const live = rows.filter((x) => this.endOf(lifeOf(x)) > now);
    const usable = await Promise.all(live.map((x) => this.tenancy.usableUser(x.userId)));
    const users = await this.db.prisma.user.findMany({
      where: { id: { in: usable.flatMap((u) => (u ? [u.id] : [])) } },
      select: { id: true, username: true, displayName: true },
    });
    return live.flatMap((x) => {
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

/** What a session search filters by. */
export type SessionFilter = { case: "inIds"; value: string[] } | { case: "userId"; value: string };

const sessions: Searchable<SessionFilter, P.LoginSessionWhereInput, P.LoginSessionOrderByWithRelationInput, LoginSession> = {
  table: "loginSession",
  sources: tableSources.loginSession,
  filters: {
    inIds: (ids) => ({ id: { in: ids } }),
    userId: (userId) => ({ userId }),
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

  async search(instanceId: string, req: SearchRequest<SessionFilter>, window: ListWindow): Promise<SearchPage<SessionWithUser>> {
    const page = await search(this.db, this.cache, sessions, [{ instanceId }], req, window);
    return { ...page, rows: await this.withUsers(page.rows) };
  }

  async byIds(instanceId: string, ids: string[]): Promise<SessionWithUser[]> {
    return this.withUsers(await this.db.reads.prisma.loginSession.findMany({ where: { instanceId, id: { in: ids } } }));
  }

  private async withUsers(rows: LoginSession[]): Promise<SessionWithUser[]> {
    const users = await this.db.reads.prisma.user.findMany({
      where: { id: { in: [...new Set(rows.map((r) => r.userId))] } },
      select: { id: true, loginName: true, orgId: true },
    });
    const byId = new Map(users.map((u) => [u.id, u]));
    return rows.map((row) => ({ row, user: byId.get(row.userId) }));
  }
}
