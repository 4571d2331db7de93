import { hashToken } from "../crypto/tokens.js";
import type { TenancyQueries } from "../query/tenancy.js";
import type { Caller } from "./context.js";

/**
 * The seam through which bearer tokens become callers. Personal access tokens are verified here; the OIDC
 * provider adds a verifier for its own access tokens. The first verifier that recognises a token decides.
 */
export interface TokenVerifier {
  /** undefined: not a token of this kind (next verifier); null: this kind, but invalid or expired. */
  verify(token: string): Promise<Omit<Caller, "memberships"> | null | undefined>;
}

export class PersonalAccessTokenVerifier implements TokenVerifier {
  constructor(private readonly queries: TenancyQueries) {}

  async verify(token: string) {
    if (!token.startsWith("pat_")) return undefined;
    const owner = await this.queries.tokenOwner(hashToken(token));
    if (!owner || (owner.expiresAt && owner.expiresAt.getTime() <= Date.now())) return null;
    return { userId: owner.userId, instanceId: owner.instanceId, orgId: owner.orgId };
  }
}

export class TokenVerifiers {
  private readonly verifiers: TokenVerifier[] = [];

  constructor(private readonly queries: TenancyQueries) {}

  add(v: TokenVerifier): void {
    this.verifiers.push(v);
  }

  async callerOf(token: string): Promise<Caller | null> {
    for (const v of this.verifiers) {
      const found = await v.verify(token);
      if (found === undefined) continue;
      if (found === null) return null;
      return { ...found, memberships: await this.queries.membershipsOf(found.userId) };
    }
    return null;
  }
}
