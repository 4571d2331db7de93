import type { FastifyRequest } from "fastify";
import type { FunctionExecutions } from "../actions/functions.js";
import { hostnameOf } from "../authz/interceptor.js";
import type { EventStore } from "../eventstore/eventstore.js";
import type { ProjectionCache } from "../query/cache.js";
import type { SettingsQueries } from "../query/settings.js";
import type { InstanceRow, TenancyQueries } from "../query/tenancy.js";
import type { Database } from "../storage/database.js";
import type { Clients } from "./clients.js";
import type { SigningKeys } from "./keys.js";
import type { ReplayGuard } from "./replay.js";
import type { Tokens } from "./tokens.js";

/** Everything the OAuth / OIDC endpoints share. */
export interface OidcDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  tenancy: TenancyQueries;
  settings: SettingsQueries;
  keys: SigningKeys;
  tokens: Tokens;
  clients: Clients;
  replay: ReplayGuard;
  functions: FunctionExecutions;
  /** true: the issuer is https (SVC_EXTERNAL_SECURE). */
  secure: boolean;
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
export async function scopeOf(deps: OidcDeps, req: FastifyRequest): Promise<RequestScope | undefined> {
  const host = req.headers.host ?? "";
  const instance = await deps.tenancy.instanceByDomain(hostnameOf(host));
  if (!instance || !/^[A-Za-z0-9.:[\]-]+$/.test(host)) return undefined;
  return { instance, issuer: `${deps.secure ? "https" : "http"}://${host.toLowerCase()}` };
}
