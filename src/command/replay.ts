import type { Database } from "../storage/database.js";

interface Pending {
  key: string;
  expiresAt: Date;
  done: (fresh: boolean) => void;
  fail: (e: unknown) => void;
}

/**
 * JWT IDs of client assertions and JWT profile grants, remembered until the JWT expires. The unique key makes
 * the first use win even when two arrive at once, across processes; the second is refused.
 *
 * The one write of the OIDC provider that is not an event: a used JWT ID changes no resource, nothing but this
 * guard reads it, and it is worthless once the JWT has expired, while an event would be kept for ever (and
 * would cost an aggregate lock per token request).
 *
 * Uses arriving while an insert is under way wait and go in together as one statement
 * (`INSERT ... ON CONFLICT DO NOTHING RETURNING`): the keys it returns were fresh, the others replays. Under load
 * that turns one write per token request into one write per batch.
 */
export class ReplayGuard {
  private queue: Pending[] = [];
  private busy = false;

  constructor(private readonly db: Database) {}

  async use(key: string, expSeconds: number, refused: () => Error): Promise<void> {
    if (key.endsWith(":") || !Number.isFinite(expSeconds)) throw refused();
    const fresh = await new Promise<boolean>((done, fail) => {
      this.queue.push({ key, expiresAt: new Date(expSeconds * 1000), done, fail });
      if (!this.busy) void this.flush();
    });
    if (!fresh) throw refused();
  }

  private async flush(): Promise<void> {
    this.busy = true;
    while (this.queue.length) {
      const batch = this.queue.splice(0, 1000);
      // The same key twice in one batch: the first one counts.
      const first = new Map<string, Pending>();
      for (const p of batch) if (!first.has(p.key)) first.set(p.key, p);
      try {
        const keys = [...first.keys()];
        const expires = [...first.values()].map((p) => p.expiresAt);
        const rows = await this.db.prisma.$queryRaw<{ key: string }[]>`
          INSERT INTO used_jwt_ids (key, expires_at)
          SELECT * FROM unnest(${keys}::text[], ${expires}::timestamptz[])
          ON CONFLICT (key) DO NOTHING RETURNING key`;
        const inserted = new Set(rows.map((r) => r.key));
        for (const p of batch) p.done(first.get(p.key) === p && inserted.has(p.key));
      } catch (e) {
        for (const p of batch) p.fail(e);
      }
    }
    this.busy = false;
    // Old entries are of no use once their JWTs expired; an occasional sweep keeps the table small.
    if (Math.random() < 0.01) await this.db.prisma.usedJwtId.deleteMany({ where: { expiresAt: { lt: new Date() } } }).catch(() => undefined);
  }
}
