import type { TokenVerifier } from "../authz/verifier.js";
import type { TenancyQueries } from "../query/tenancy.js";
import { decodeJwt } from "./jwt.js";
import { API_AUDIENCE } from "./scopes.js";
import type { AccessClaims, Tokens } from "./tokens.js";

/**
 * Access tokens of this server's token endpoint as API credentials (the platform's verifier seam): valid,
 * unrevoked, and issued for the APIs (audience `svc`, scope `urn:svc:iam:org:project:id:svc:aud`).
 */
export class OidcAccessTokenVerifier implements TokenVerifier {
  constructor(
    private readonly tokens: Tokens,
    private readonly tenancy: TenancyQueries,
  ) {}

  async verify(token: string) {
    if (token.startsWith("pat_")) return undefined;
    const instanceId = this.instanceOf(token);
    if (instanceId === undefined) return undefined;
    if (!(await this.tenancy.instanceById(instanceId))) return null;
    const claims = await this.tokens.verifyAccess(token, instanceId);
    if (!claims?.aud.includes(API_AUDIENCE)) return null;
    return { userId: claims.sub, instanceId, orgId: claims["urn:svc:iam:user:resourceowner:id"] };
  }

  /** The instance a token claims to be from (checked afterwards); undefined when it is none of ours. */
  private instanceOf(token: string): string | undefined {
    const claims = (this.tokens.peek(token) ?? decodeJwt(token)?.payload) as Partial<AccessClaims> | undefined;
    const id = claims?.["urn:svc:iam:instance:id"];
    return typeof id === "string" ? id : undefined;
  }
}
