import type { FastifyRequest } from "fastify";
import type { FunctionExecutions } from "../actions/functions.js";
import { hostnameOf } from "../authz/interceptor.js";
import type { ReplayGuard } from "../command/replay.js";
import type { SecretBox } from "../crypto/secrets.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { AuthRequestQueries } from "../query/auth-requests.js";
import type { ProjectionCache } from "../query/cache.js";
import { OAuthClientQueries } from "../query/oauth-clients.js";
import { ProjectQueries } from "../query/projects.js";
import { SessionQueries, type SessionLifetimes } from "../query/sessions.js";
import type { SettingsQueries } from "../query/settings.js";
import { SigningKeyQueries } from "../query/signing-keys.js";
import type { InstanceRow, TenancyQueries } from "../query/tenancy.js";
import { TokenQueries } from "../query/tokens.js";
import { UserGrantQueries } from "../query/user-grants.js";
import { UserQueries } from "../query/users.js";
import type { Database } from "../storage/database.js";
import type { Clients } from "./clients.js";
import type { Tokens } from "./tokens.js";

/** Every read of the OAuth / OIDC endpoints: projections, through the query modules. */
export interface OidcQueries {
  keys: SigningKeyQueries;
  authRequests: AuthRequestQueries;
  /** Refresh tokens and access token revocations. */
  tokenQueries: TokenQueries;
  sessions: SessionQueries;
  users: UserQueries;
  projects: ProjectQueries;
  userGrants: UserGrantQueries;
  oauthClients: OAuthClientQueries;
}

export function oidcQueries(db: Database, cache: ProjectionCache, box: SecretBox, sessionLifetimes: SessionLifetimes, clock: Clock = systemClock): OidcQueries {
  return {
    keys: new SigningKeyQueries(db, cache, box, clock),
    authRequests: new AuthRequestQueries(db),
    tokenQueries: new TokenQueries(db, cache),
    sessions: new SessionQueries(db, cache, sessionLifetimes, clock),
    users: new UserQueries(db, cache),
    projects: new ProjectQueries(db, cache),
    userGrants: new UserGrantQueries(db, cache),
    oauthClients: new OAuthClientQueries(db, cache, clock),
  };
}

/** Everything the OAuth / OIDC endpoints share: writes go through `es` to the commands, reads through the queries. */
export interface OidcDeps extends OidcQueries {
  es: EventStore;
  tenancy: TenancyQueries;
  settings: SettingsQueries;
  tokens: Tokens;
  clients: Clients;
  replay: ReplayGuard;
  functions: FunctionExecutions;
  /** Seals what is kept at rest with the master key (a refresh's answer during its grace window). */
  box: SecretBox;
  /** true: the issuer is https (SVC_EXTERNAL_SECURE). */
  secure: boolean;
  /** The time of every expiry and max_age decision (src/domain/clock.ts). */
  clock: Clock;
}

export const paths = {
  authorize: "/oauth/v2/authorize",
  token: "/oauth/v2/token",
  introspect: "/oauth/v2/introspect",
  revoke: "/oauth/v2/revoke",
  keys: "/oauth/v2/keys",
  userinfo: "/oidc/v1/userinfo",
  endSession: "/oidc/v1/end_session",
  discovery: "/.well-known/openid-configuration",
} as const;

export interface RequestScope {
  instance: InstanceRow;
  /** The issuer of this instance as the request reached it: scheme, host and port. */
  issuer: string;
}

/** The instance of the request's Host, and its issuer; undefined for an unknown host. */
export async function scopeOf(deps: Pick<OidcDeps, "tenancy" | "secure">, req: FastifyRequest): Promise<RequestScope | undefined> {
  // Behind a trusted proxy, the scheme and host it forwarded (an instance's domain, or the request is not served).
  const { host, secure } = req.client;
  const instance = await deps.tenancy.instanceByDomain(hostnameOf(host));
  if (!instance || !/^[A-Za-z0-9.:[\]-]+$/.test(host)) return undefined;
  return { instance, issuer: `${deps.secure || secure ? "https" : "http"}://${host.toLowerCase()}` };
}
