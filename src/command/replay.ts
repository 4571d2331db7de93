import { type Clock, dateOf, systemClock } from "../domain/clock.js";
import type { Database } from "../storage/database.js";
import { Batches } from "./batches.js";

interface Use {
  key: string;
  expiresAt: Date;
}

/**
 * JWT IDs of client assertions and JWT profile grants, remembered until the JWT expires, and the one-time answers
 * of sign-ins: the login UI's WebAuthn challenges until their sealed ceremony expires, accepted TOTP codes until
 * their time step has left the window. The unique key makes the first use win even when two arrive at once,
 * across processes; the second is refused.
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
  private readonly batches = new Batches<Use, boolean>((_, uses) => this.insert(uses), 1000);

  constructor(
    private readonly db: Database,
    /** The time of the sweep's cutoff: the server's clock. */
    private readonly clock: Clock = systemClock,
  ) {}

  async use(key: string, expSeconds: number, refused: () => Error): Promise<void> {
    if (!(await this.firstUse(key, expSeconds))) throw refused();
  }

  /** Whether `key` is used for the first time (it is used now); false for a replay, or a key without its last part. */
  async firstUse(key: string, expSeconds: number): Promise<boolean> {
    if (key.endsWith(":") || !Number.isFinite(expSeconds)) return false;
    return this.batches.add("", { key, expiresAt: new Date(expSeconds * 1000) });
  }

  /** One statement for the batch: the keys it returns were fresh; the same key twice in one batch, the first one counts. */
  private async insert(uses: Use[]): Promise<boolean[]> {
    const first = new Map<string, Use>();
    for (const u of uses) if (!first.has(u.key)) first.set(u.key, u);
    const keys = [...first.keys()];
    const expires = [...first.values()].map((u) => u.expiresAt);
    const rows = await this.db.prisma.$queryRaw<{ key: string }[]>`
      INSERT INTO used_jwt_ids (key, expires_at)
      SELECT * FROM unnest(${keys}::text[], ${expires}::timestamptz[])
      ON CONFLICT (key) DO NOTHING RETURNING key`;
    const inserted = new Set(rows.map((r) => r.key));
    // Old entries are of no use once their JWTs expired; an occasional sweep keeps the table small.
    if (Math.random() < 0.01) void this.db.prisma.usedJwtId.deleteMany({ where: { expiresAt: { lt: dateOf(this.clock) } } }).catch(() => undefined);
    return uses.map((u) => first.get(u.key) === u && inserted.has(u.key));
  }
}
