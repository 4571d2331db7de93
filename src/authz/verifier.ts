import { hashToken } from "../crypto/tokens.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { TenancyQueries } from "../query/tenancy.js";
import type { Caller } from "./context.js";

/**
 * The seam through which bearer tokens become callers. Personal access tokens are verified here; the OIDC
 * provider adds a verifier for its own access tokens. The first verifier that recognises a token decides.
 */
export interface TokenVerifier {
  /**
   * undefined: not a token of this kind, or none this server issued (next verifier); null: one of this kind that
   * was issued here, but is expired, revoked or no longer usable.
   */
  verify(token: string): Promise<Omit<Caller, "memberships"> | null | undefined>;
}

export class PersonalAccessTokenVerifier implements TokenVerifier {
  constructor(
    private readonly queries: TenancyQueries,
    /** The time tokens expire by. */
    private readonly clock: Clock = systemClock,
  ) {}

  async verify(token: string) {
    if (!token.startsWith("pat_")) return undefined;
    const owner = await this.queries.tokenOwner(hashToken(token));
    // no PAT has this hash: a guess (or a removed PAT, which no one can tell from one)
    if (!owner) return undefined;
    if (owner.expiresAt && owner.expiresAt.getTime() <= this.clock.now()) return null;
    return { userId: owner.userId, instanceId: owner.instanceId, orgId: owner.orgId };
  }
}

export class TokenVerifiers {
  private readonly verifiers: TokenVerifier[] = [];

  constructor(private readonly queries: TenancyQueries) {}

  add(v: TokenVerifier): void {
    this.verifiers.push(v);
  }

  /**
   * The caller a token stands for; null for a token issued here that no longer works (expired, revoked, its user
   * gone), undefined for one no verifier knows: never issued here, a guess (the failure limits count those).
   */
  async callerOf(token: string): Promise<Caller | null | undefined> {
    for (const v of this.verifiers) {
      const found = await v.verify(token);
      if (found === undefined) continue;
      if (found === null) return null;
      return { ...found, memberships: await this.queries.membershipsOf(found.userId) };
    }
    return undefined;
  }
}
