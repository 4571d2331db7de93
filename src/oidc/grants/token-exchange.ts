import type { FastifyRequest } from "fastify";
import { permissionsIn } from "../../authz/interceptor.js";
import { describeMembership, uncoveredMembership } from "../../authz/permissions.js";
import type { ActorClaim, RefreshGrant, RefreshRotation } from "../../events/index.js";
import { recordTokenExchange } from "../../command/token-exchange.js";
import { inheritanceChain } from "../../domain/contexts.js";
import { defaultRolePermissions } from "../../domain/roles.js";
import type { UserRow } from "../../query/users.js";
import { roleClaims, userClaims } from "../claims.js";
import { checkAssertionTimes, type AuthMethod, type OAuthClient } from "../clients.js";
import { paths, type OidcDeps, type RequestScope } from "../context.js";
import { OAuthError, oauth } from "../errors.js";
import { issueAccess, type TokenResponse } from "../issue.js";
import { decodeJwt, verifyRs256 } from "../jwt.js";
import { API_AUDIENCE, audienceOf, parseScopes } from "../scopes.js";
import { isActorClaim, randomToken, sha256, Tokens } from "../tokens.js";
import { authenticateApp } from "./grant.js";
import { grantAllowsSignIn } from "../../query/user-grants.js";

/**
 * Token exchange (RFC 8693): a client presents a token of a user (the subject) and gets new tokens for that user,
 * narrower or of another type; with an actor token, someone else acting for the user (impersonation or
 * delegation: the tokens carry the actor as `act`). Gated by the instance's `oidc_token_exchange` flag and the
 * client's grant types; acting for a user needs the security settings' `enable_impersonation` and the actor's
 * permission `impersonation` on the user's organisation.
 */
export const grantType = "urn:ietf:params:oauth:grant-type:token-exchange";
export const parameters = [
  "subject_token",
  "subject_token_type",
  "actor_token",
  "actor_token_type",
  "requested_token_type",
  "scope",
  "audience",
  "resource",
] as const;
/**
 * Only authenticated clients (RFC 8693 §2.1 SHOULD): a public client (`none`) proves nothing about who asks, so
 * anyone holding a user's token could otherwise trade it for new tokens in that client's name (security review #11).
 */
export const clientAuthMethods: readonly AuthMethod[] = ["client_secret_basic", "client_secret_post", "private_key_jwt"];

/** The token type identifiers (RFC 8693 §3, and this server's user ID type). */
export const tokenTypes = {
  accessToken: "urn:ietf:params:oauth:token-type:access_token",
  refreshToken: "urn:ietf:params:oauth:token-type:refresh_token",
  idToken: "urn:ietf:params:oauth:token-type:id_token",
  jwt: "urn:ietf:params:oauth:token-type:jwt",
  userId: "urn:svc:params:oauth:token-type:user_id",
} as const;
type TokenType = (typeof tokenTypes)[keyof typeof tokenTypes];

/**
 * The specification's token type matrix, as data: what each identifier may be as subject_token, actor_token and
 * requested_token_type. `withActor`: only together with an actor_token. Refresh tokens are refused everywhere.
 */
export const tokenTypeMatrix: Record<TokenType, { subject: boolean | "withActor"; actor: boolean; requested: boolean }> = {
  [tokenTypes.accessToken]: { subject: true, actor: true, requested: true },
  [tokenTypes.refreshToken]: { subject: false, actor: false, requested: false },
  [tokenTypes.idToken]: { subject: true, actor: true, requested: true },
  [tokenTypes.jwt]: { subject: "withActor", actor: false, requested: true },
  [tokenTypes.userId]: { subject: "withActor", actor: false, requested: false },
};
const isTokenType = (t: string): t is TokenType => Object.hasOwn(tokenTypeMatrix, t);

/** The scopes that only name claims of the user: a subject that names no scope (ID token, JWT, user ID) may get them. */
const SUBJECT_DATA_SCOPES = ["openid", "profile", "email", "phone"];

/** The flag is judged for the instance, like every gate of a request without an organisation. */
export async function enabled(deps: OidcDeps, s: RequestScope): Promise<boolean> {
  return (await deps.settings.values("feature", inheritanceChain({ type: "instance", instanceId: s.instance.id }))).oidc_token_exchange;
}

/** A verified subject or actor token: the user it is about and what it carries. */
interface Presented {
  type: TokenType;
  user: UserRow;
  /** The scopes it was issued with; an ID token stands for `openid`; a JWT and a user ID name none. */
  scopes: string[];
  audience: string[];
  act?: ActorClaim;
  authTime?: number;
  amr?: string[];
  sid?: string;
}

/** Actors acting for actors: a token names at most this many (each exchange with an actor adds one). */
const MAX_ACTORS = 8;
const chainLength = (act: ActorClaim | undefined): number => (act ? 1 + chainLength(act.act) : 0);

/** Every problem with a presented token, or a policy that refuses it, is invalid_request (RFC 8693 §2.2.2). */
const refused = (d: string) => oauth.invalidRequest(d);
const invalidTarget = (d: string) => new OAuthError("invalid_target", d);

export async function handler(deps: OidcDeps, s: RequestScope, req: FastifyRequest, params: Record<string, string>): Promise<TokenResponse> {
  const client = await authenticateApp(deps, s, req, params, clientAuthMethods);
  if (!client.oidc!.grantTypes.includes(grantType)) throw oauth.unauthorizedClient("the client may not use the token exchange grant");
  // RFC 8707 resource indicators are not supported: audiences are named with `audience`.
  if (params.resource) throw invalidTarget("the resource parameter is not supported; name the audience with audience");

  const types = checkTypes(params);
  const subject = await verifyPresented(deps, s, client, "subject_token", params.subject_token!, types.subject);
  const actor = params.actor_token ? await verifyPresented(deps, s, client, "actor_token", params.actor_token, types.actor!) : undefined;
  if (actor) await checkImpersonation(deps, s, subject.user, actor.user);

  let scopes = scopesOf(params.scope, subject, actor);
  // What the client may hold at all, as its own code flow would give it: its client ID, its project and the
  // projects its scope names. Never another client's ID, whatever the presented tokens name (security review #11).
  const clientAudience = audienceOf(scopes, [client.clientId, client.projectId!]);
  const audience = exchangeAudience(params.audience, scopes, subject, actor, clientAudience);
  // RFC 8693 §4.1: the actor, nested in the actor's own actor (or the one the subject token already names). A
  // subject token that names an actor keeps it when exchanged without one: an exchange never hides who acts.
  const act: ActorClaim | undefined = actor
    ? { iss: s.issuer, sub: actor.user.id, ...((actor.act ?? subject.act) ? { act: actor.act ?? subject.act } : {}) }
    : subject.act;
  if (chainLength(act) > MAX_ACTORS) throw refused(`the chain of actors would be longer than ${MAX_ACTORS}`);
  // A refresh token only where its refreshes give what this exchange gave: the refresh grant issues tokens for the
  // client's own audience and the scope's projects, without `act`. So never for someone acting for the user, nor
  // for another audience; and only for a client with the refresh_token grant.
  const sameAudience = clientAudience.length === audience.length && clientAudience.every((a) => audience.includes(a));
  const withRefresh =
    types.requested !== tokenTypes.idToken && scopes.includes("offline_access") && !act && sameAudience && client.oidc!.grantTypes.includes("refresh_token");
  if (!withRefresh) scopes = scopes.filter((x) => x !== "offline_access");

  // Session, authentication time and methods: the actor's when someone acts (they signed in), else the subject's.
  const source = actor ?? subject;
  const sid = subject.sid ?? actor?.sid;
  const issued = await issueExchangeTokens(
    deps,
    s,
    { client, user: subject.user, scopes, audience, act, sid, authTime: source.authTime, amr: source.amr },
    types.requested,
  );

  let refresh: { resourceOwner: string; rotation: RefreshRotation; grant: RefreshGrant } | undefined;
  if (withRefresh && issued.access) {
    const token = randomToken();
    issued.response.refresh_token = token;
    const now = deps.clock.now();
    refresh = {
      resourceOwner: subject.user.orgId,
      rotation: {
        tokenHash: sha256(token),
        accessJti: issued.access.jti,
        accessExpires: new Date(issued.access.exp * 1000).toISOString(),
        idleExpiresAt: new Date(now + deps.tokens.lifetimes.refreshIdleMs).toISOString(),
      },
      grant: {
        clientId: client.clientId,
        applicationId: client.id,
        userId: subject.user.id,
        scopes,
        audience,
        sessionId: sid ?? null,
        authTime: new Date((source.authTime ?? Math.floor(now / 1000)) * 1000).toISOString(),
        amr: source.amr ?? [],
        expiresAt: new Date(now + deps.tokens.lifetimes.refreshAbsoluteMs).toISOString(),
      },
    };
  }
  await recordTokenExchange(deps.es, {
    instanceId: s.instance.id,
    creator: actor?.user.id ?? client.clientId,
    ...(refresh ? { refresh } : {}),
    ...(actor && act ? { impersonation: { userId: subject.user.id, orgId: subject.user.orgId, act, clientId: client.clientId } } : {}),
  });
  return issued.response;
}

/** The token types of the request against the matrix; anything else is invalid_request naming the parameter. */
function checkTypes(params: Record<string, string>): { subject: TokenType; actor?: TokenType; requested: TokenType } {
  if (!params.subject_token) throw oauth.invalidRequest("subject_token is missing");
  if (!params.subject_token_type) throw oauth.invalidRequest("subject_token_type is missing");
  // RFC 8693 §2.1: actor_token_type is required with an actor_token and must not come without one.
  if (params.actor_token && !params.actor_token_type) throw oauth.invalidRequest("actor_token_type is missing (required with actor_token)");
  if (!params.actor_token && params.actor_token_type) throw oauth.invalidRequest("actor_token_type was sent without actor_token");
  const unsupported = (name: string, value: string, why = "is not supported") =>
    oauth.invalidRequest(`${name} ${value.slice(0, 100)} ${why}${value === tokenTypes.refreshToken ? ": refresh tokens cannot be exchanged" : ""}`);
  const subject = params.subject_token_type;
  const subjectRule = isTokenType(subject) ? tokenTypeMatrix[subject].subject : false;
  if (!subjectRule) throw unsupported("subject_token_type", subject, "is not supported as a subject token");
  if (subjectRule === "withActor" && !params.actor_token) throw oauth.invalidRequest(`a subject token of type ${subject} needs an actor_token`);
  const actor = params.actor_token_type;
  if (actor && !(isTokenType(actor) && tokenTypeMatrix[actor].actor)) throw unsupported("actor_token_type", actor, "is not supported as an actor token");
  const requested = params.requested_token_type ?? tokenTypes.accessToken;
  if (!(isTokenType(requested) && tokenTypeMatrix[requested].requested)) throw unsupported("requested_token_type", requested, "cannot be issued");
  return { subject: subject as TokenType, ...(actor ? { actor: actor as TokenType } : {}), requested };
}

/** An access token is meant for the client when its audience names the client or the client's project (as introspection asks). */
const meantFor = (aud: string[], client: OAuthClient) => aud.includes(client.clientId) || (!!client.projectId && aud.includes(client.projectId));

/**
 * Verifies a subject or actor token of its type: issued by this instance (or, a JWT, signed by the client's own
 * key), valid, not revoked, meant for this client, about an active user of the instance. Every failure is
 * invalid_request naming the parameter, never more about why than that.
 */
async function verifyPresented(deps: OidcDeps, s: RequestScope, client: OAuthClient, name: string, token: string, type: TokenType): Promise<Presented> {
  const invalid = (why = "is invalid, expired or revoked") => refused(`${name} ${why}`);
  const activeUser = async (id: unknown) => {
    // The cached read of token subjects (every access token check reads it), scoped to the instance here.
    const user = typeof id === "string" && id.length <= 200 ? await deps.users.tokenSubject(id) : null;
    if (user?.instanceId !== s.instance.id || user.state !== "active") throw invalid("does not stand for an active user of this instance");
    return user;
  };
  if (type === tokenTypes.accessToken) {
    const claims = await deps.tokens.verifyAccess(token, s.instance.id);
    if (!claims) throw invalid();
    if (!meantFor(claims.aud, client)) throw invalid("was not issued for this client");
    return {
      type,
      user: await activeUser(claims.sub),
      scopes: claims.scope.split(" ").filter(Boolean),
      audience: claims.aud,
      ...(claims.act ? { act: claims.act } : {}),
      ...(claims.auth_time !== undefined ? { authTime: claims.auth_time } : {}),
      ...(claims.amr ? { amr: claims.amr } : {}),
      ...(claims.sid ? { sid: claims.sid } : {}),
    };
  }
  if (type === tokenTypes.idToken) {
    const jwt = decodeJwt(token);
    // An ID token of this issuer: signed with the instance's key, typ JWT (a JWT access token is typ at+jwt).
    const keys = jwt && jwt.header.typ !== "at+jwt" ? await deps.keys.published(s.instance.id) : [];
    if (!jwt || !verifyRs256(jwt, (kid) => keys.find((k) => k.kid === kid)?.key)) throw invalid();
    const p = jwt.payload;
    if (p.iss !== s.issuer || typeof p.exp !== "number" || p.exp * 1000 <= deps.clock.now()) throw invalid();
    const aud = (Array.isArray(p.aud) ? p.aud : [p.aud]).filter((a): a is string => typeof a === "string");
    // Only the client the ID token was issued to (OIDC Core §2: azp, else its one audience) may exchange it, not
    // any client of the project: ID tokens are no bearer credentials and travel in URLs (id_token_hint).
    const issuedTo = typeof p.azp === "string" ? p.azp : aud.length === 1 ? aud[0] : undefined;
    if (issuedTo !== client.clientId) throw invalid("was not issued for this client");
    // An ID token stands for its browser session: once that ended (logout), it stands for nothing.
    if (p.sid !== undefined && (typeof p.sid !== "string" || !(await deps.sessions.active(p.sid)))) throw invalid();
    return {
      type,
      user: await activeUser(p.sub),
      scopes: ["openid"],
      audience: aud,
      ...(isActorClaim(p.act) ? { act: p.act } : {}),
      ...(typeof p.auth_time === "number" ? { authTime: p.auth_time } : {}),
      ...(Array.isArray(p.amr) && p.amr.every((x) => typeof x === "string") ? { amr: p.amr as string[] } : {}),
      ...(typeof p.sid === "string" ? { sid: p.sid } : {}),
    };
  }
  if (type === tokenTypes.jwt) {
    // A JWT the client signed with one of its own keys (private_key_jwt), about a user: iss the client, sub the
    // user, aud this issuer, at most an hour old, its jti used once. It carries no scope and no audience.
    const jwt = decodeJwt(token);
    if (!jwt) throw invalid("is not a JWT");
    const p = jwt.payload;
    if (p.iss !== client.clientId) throw invalid("must be issued (iss) by the client");
    if (!verifyRs256(jwt, await deps.oauthClients.verificationKeys({ applicationId: client.id }))) throw invalid("is not signed by a key of the client");
    checkAssertionTimes(p, name, refused, deps.clock.now());
    const aud = Array.isArray(p.aud) ? p.aud : [p.aud];
    if (!aud.some((a) => a === s.issuer || a === `${s.issuer}${paths.token}`)) throw invalid("must name this issuer in aud");
    const user = await activeUser(p.sub);
    await deps.replay.use(`token-exchange:${client.clientId}:${String(p.jti ?? "")}`, Number(p.exp), () => invalid("has no jti or was already used"));
    return { type, user, scopes: [], audience: [] };
  }
  // A user ID (only with an actor, who needs the permission to act for the user).
  return { type, user: await activeUser(token), scopes: [], audience: [] };
}

/**
 * Acting for a user (impersonation): the security settings in force for the user's organisation must allow it,
 * and the actor must hold `impersonation` there, and `admin.impersonation` too when the user is an
 * administrator (holds any membership).
 */
async function checkImpersonation(deps: OidcDeps, s: RequestScope, subject: UserRow, actor: UserRow): Promise<void> {
  const chain = inheritanceChain({ type: "org", instanceId: s.instance.id, orgId: subject.orgId });
  const security = await deps.settings.values("security", chain);
  if (!security.enable_impersonation) throw refused("impersonation is not allowed: the security settings do not enable it for the user's organisation");
  const org = await deps.tenancy.orgById(s.instance.id, subject.orgId);
  if (!org) throw refused("the organisation of the subject_token's user no longer exists");
  const [actorMemberships, subjectMemberships] = await Promise.all([deps.tenancy.membershipsOf(actor.id), deps.tenancy.membershipsOf(subject.id)]);
  const caller = { userId: actor.id, instanceId: actor.instanceId, orgId: actor.orgId, memberships: actorMemberships };
  const held = permissionsIn(caller, { type: "org", instance: s.instance, org }, defaultRolePermissions);
  if (!held.has("impersonation")) throw refused("the actor may not impersonate users of this organisation (missing permission impersonation)");
  if (subjectMemberships.length && !held.has("admin.impersonation"))
    throw refused("the user is an administrator: impersonating them needs the permission admin.impersonation");
  // Acting as an administrator is at least as strong as changing their password: the same ceiling applies.
  const above = await uncoveredMembership(caller, { id: subject.id, memberships: subjectMemberships }, defaultRolePermissions, deps.tenancy);
  if (above) throw refused(`the user is a member with ${describeMembership(above)}, which the actor does not hold there`);
}

/**
 * The scope (RFC 8693 §2.1): as asked, else the subject token's, else the actor token's. Each scope must be in
 * the subject or actor token; a subject that names no scope (ID token, JWT, user ID) may also get the scopes
 * that only name the user's claims (openid, profile, email, phone). Unknown scopes are invalid_scope.
 */
function scopesOf(asked: string | undefined, subject: Presented, actor: Presented | undefined): string[] {
  const requested = parseScopes(asked);
  const scopes = requested.length ? requested : subject.scopes.length ? subject.scopes : (actor?.scopes ?? []);
  const scopeless = subject.type !== tokenTypes.accessToken;
  for (const x of scopes) {
    const carried = subject.scopes.includes(x) || !!actor?.scopes.includes(x);
    if (!carried && !(scopeless && SUBJECT_DATA_SCOPES.includes(x)))
      throw oauth.invalidScope(`the scope ${x.slice(0, 100)} is not in the subject or actor token: token exchange may only narrow`);
  }
  return scopes;
}

/**
 * The audience: `audience` (space-separated when sent several times) must be within the subject's and the
 * actor's audiences (RFC 8693 §2.1) and within what the client may hold (`clientAudience`), invalid_target
 * otherwise, and is then exactly the token's. Without it, the subject token's audience (the actor's for a subject
 * with none) as far as the client may hold it (so less the projects of `…:aud` scopes the exchange leaves out),
 * plus the projects of the `…:aud` scopes it keeps.
 */
function exchangeAudience(asked: string | undefined, scopes: string[], subject: Presented, actor: Presented | undefined, clientAudience: string[]): string[] {
  const allowed = new Set([...subject.audience, ...(actor?.audience ?? [])]);
  const requested = [...new Set((asked ?? "").split(" ").filter(Boolean))];
  if (requested.length) {
    const foreign = requested.find((a) => !allowed.has(a));
    if (foreign !== undefined) throw invalidTarget(`the audience ${foreign.slice(0, 100)} is not an audience of the subject or actor token`);
    const beyond = requested.find((a) => !clientAudience.includes(a));
    if (beyond !== undefined) throw invalidTarget(`the audience ${beyond.slice(0, 100)} is not one this client may have tokens for`);
    return requested;
  }
  const from = subject.audience.length ? subject : (actor ?? subject);
  const aud = from.audience.filter((a) => clientAudience.includes(a));
  for (const x of scopes) {
    // The project a `urn:svc:iam:org:project:id:<project>:aud` scope names (scopes.ts), if it is one.
    const project = audienceOf([x], [])[0];
    if (project && allowed.has(project) && !aud.includes(project)) aud.push(project);
  }
  return aud;
}

/**
 * The tokens of the requested type for the subject's user (RFC 8693 §2.2.1): an opaque access token (default),
 * a JWT access token, or an ID token in `access_token` (`token_type` `N_A`); an ID token beside an access token
 * when the scope has `openid`. Every token carries `act` when someone acts for the user.
 */
async function issueExchangeTokens(
  deps: OidcDeps,
  s: RequestScope,
  a: { client: OAuthClient; user: UserRow; scopes: string[]; audience: string[]; act?: ActorClaim; sid?: string; authTime?: number; amr?: string[] },
  requested: TokenType,
): Promise<{ response: TokenResponse; access?: { jti: string; exp: number } }> {
  const { client, user, scopes } = a;
  // project_role_check: tokens for a client of a project that checks roles only for users with a grant of it, as at sign-in.
  if (!(await grantAllowsSignIn(deps.projects, deps.userGrants, client.projectId, user.id)))
    throw oauth.invalidGrant("the user has no grant of the client's project, which checks roles");
  const projectAsserts = client.projectId ? await deps.projects.assertsRoles(client.projectId) : false;
  const roles = await roleClaims(deps.userGrants, user.id, client.projectId, scopes, projectAsserts && !!client.oidc?.accessTokenRoleAssertion);
  const common = {
    ...(a.authTime !== undefined ? { auth_time: a.authTime } : {}),
    ...(a.amr ? { amr: a.amr } : {}),
    ...(a.sid ? { sid: a.sid } : {}),
    ...(a.act ? { act: a.act } : {}),
  };
  const idToken = async (accessToken?: string) => {
    // Scope claims go into the ID token when the client asks for it, or when no access token comes with it.
    const profile = client.oidc?.idTokenUserinfoAssertion || !accessToken ? userClaims(user, scopes) : {};
    const idRoles = projectAsserts && client.oidc?.idTokenRoleAssertion ? roles : {};
    return deps.tokens.idToken(s.instance.id, {
      iss: s.issuer,
      sub: user.id,
      aud: [client.clientId, ...a.audience.filter((x) => x !== client.clientId && x !== API_AUDIENCE)],
      azp: client.clientId,
      ...common,
      ...(accessToken ? { at_hash: Tokens.halfHash(accessToken) } : {}),
      ...profile,
      ...idRoles,
    });
  };
  const scope = scopes.join(" ");
  if (requested === tokenTypes.idToken) {
    return {
      response: {
        access_token: await idToken(),
        issued_token_type: tokenTypes.idToken,
        token_type: "N_A",
        expires_in: Math.round(deps.tokens.lifetimes.idTokenMs / 1000),
        scope,
      },
    };
  }
  const type = requested === tokenTypes.jwt ? "jwt" : "opaque";
  const access = await issueAccess(
    deps,
    s,
    type,
    { iss: s.issuer, sub: user.id, client_id: client.clientId, aud: a.audience, scope, ...common, ...roles },
    user.orgId,
  );
  const response: TokenResponse = {
    access_token: access.token,
    issued_token_type: requested,
    token_type: "Bearer",
    expires_in: access.claims.exp - access.claims.iat,
    scope,
  };
  if (scopes.includes("openid")) response.id_token = await idToken(access.token);
  return { response, access: { jti: access.claims.jti, exp: access.claims.exp } };
}
