import { createHash, randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { durationMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { LoginSession } from "../../../gen/prisma/client.js";
import {
  AuthRequestSchema,
  type Checks,
  type RequestChallenges,
  CreateCallbackResponseSchema,
  CreateSessionResponseSchema,
  DeleteSessionResponseSchema,
  GetAuthRequestResponseSchema,
  GetSessionResponseSchema,
  SearchSessionsResponseSchema,
  type SessionSearchFilter,
  type SessionService,
  SessionSchema,
  SetSessionResponseSchema,
} from "../../../gen/svc/resources/session/v3alpha/session_service_pb.js";
import { callInfo, clientOf } from "../../authz/context.js";
import type { Client } from "../../domain/forwarded.js";
import { hostnameOf } from "../../authz/interceptor.js";
import {
  checkSession,
  createSession,
  deleteSession,
  MAX_SESSION_LIFETIME_S,
  usableSession,
  type SessionChallenges,
  type SessionChecks,
  type SessionDeps,
} from "../../command/api-sessions.js";
import { CODE_LIFETIME_MS, succeedAuthRequest } from "../../command/auth-requests.js";
import type { SessionFactors } from "../../events/index.js";
import type { Clock } from "../../domain/clock.js";
import { inheritanceChain } from "../../domain/contexts.js";
import { errors } from "../../errors/errors.js";
import type { StoredEvent } from "../../eventstore/eventstore.js";
import { staleSignIn, type AuthRequestQueries, type StoredAuthorization } from "../../query/auth-requests.js";
import type { OAuthClientQueries } from "../../query/oauth-clients.js";
import { SessionSearch, type SessionFilter } from "../../query/sessions.js";
import { mustChangePassword } from "../../query/users.js";
import type { ProjectionCache } from "../../query/cache.js";
import type { ProjectQueries } from "../../query/projects.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import { grantAllowsSignIn, type UserGrantQueries } from "../../query/user-grants.js";
import { toResourceDetails } from "../convert.js";
import { listDetails, listWindow, searchRequestOf, type SetFilter } from "../list.js";

/**
 * The sessions API for custom login UIs (proto svc.resources.session.v3alpha): sessions with checks, and the
 * completion of an authorization request with one (the code goes back in `callback_url`, which the login UI
 * sends the browser to, as the built-in login UI's redirect would).
 */
export interface SessionServiceDeps extends SessionDeps {
  cache: ProjectionCache;
  authRequests: AuthRequestQueries;
  clients: OAuthClientQueries;
  tenancy: TenancyQueries;
  /** For project_role_check: the client's project and the user's grants. */
  projects: ProjectQueries;
  userGrants: UserGrantQueries;
  /** The time of the auth requests' expiry and max_age decisions (src/domain/clock.ts). */
  clock: Clock;
  /** The OIDC issuer for a request's Host (the `iss` of the authorization response, RFC 9207). */
  /** The issuer as the client addressed it (scheme and host; behind trusted proxies, the forwarded ones). */
  issuerOf(client: Client): string;
}

function checksOf(c: Checks | undefined): SessionChecks {
  const user = c?.user?.search;
  return {
    ...(user?.case === "userId" ? { user: { userId: user.value } } : user?.case === "loginName" ? { user: { loginName: user.value } } : {}),
    ...(c?.password ? { password: c.password.password } : {}),
    ...(c?.totp ? { totp: c.totp.code } : {}),
    ...(c?.otpEmail ? { otpEmail: c.otpEmail.code } : {}),
    ...(c?.otpSms ? { otpSms: c.otpSms.code } : {}),
    ...(c?.webAuthN ? { webAuthN: { credentialJson: c.webAuthN.credentialJson, origin: c.webAuthN.origin } } : {}),
    ...(c?.idpIntent ? { idpIntent: { id: c.idpIntent.idpIntentId, token: c.idpIntent.idpIntentToken } } : {}),
  };
}

/** The challenges asked for; WebAuthn options are made for the domain the request reached (its RP ID). */
function challengesOf(c: RequestChallenges | undefined, ctx: HandlerContext): { challenges?: SessionChallenges } {
  if (!c) return {};
  const rpId = hostnameOf(clientOf(ctx).host);
  return {
    challenges: {
      otpEmail: c.otpEmail,
      otpSms: c.otpSms,
      ...(c.webAuthN ? { webAuthN: { userVerified: c.webAuthN.userVerificationRequired, rpId } } : {}),
    },
  };
}

/** What the challenges return to the caller. */
const challengesOut = (options: object | undefined) => (options ? { challenges: { webAuthN: { optionsJson: JSON.stringify(options) } } } : {});

function lifetimeOf(d: Parameters<typeof durationMs>[0] | undefined): number | undefined {
  if (!d) return undefined;
  const s = durationMs(d) / 1000;
  if (!(s > 0 && s <= MAX_SESSION_LIFETIME_S))
    throw errors.invalidArgument("SESS-l1fe", `invalid lifetime: must be more than 0 and at most ${MAX_SESSION_LIFETIME_S / 86_400} days`);
  return s;
}

const detailsOf = (e: StoredEvent) =>
  toResourceDetails({ id: e.aggregateId, sequence: e.sequence, changeDate: e.createdAt, resourceOwner: e.resourceOwner }, "org");
const at = (iso: string | undefined) => (iso ? { verifiedAt: timestampFromDate(new Date(iso)) } : undefined);

/** A session search's criterion in the query's terms: the user's ID is one as it is. */
const sessionFilterOf = (f: SetFilter<SessionSearchFilter>): SessionFilter => (f.case === "inIds" ? { case: "inIds", value: f.value.ids } : f);

export function toSession(row: LoginSession, user: { loginName: string; orgId: string } | undefined) {
  const f = row.factors as Partial<SessionFactors>;
  return create(SessionSchema, {
    id: row.id,
    creationDate: timestampFromDate(row.createdAt),
    changeDate: timestampFromDate(row.changeDate),
    sequence: BigInt(row.sequence),
    factors: {
      // A browser session of the built-in login UI proved its user when it signed in.
      user: { ...at(f.user?.checkedAt ?? row.createdAt.toISOString()), id: row.userId, loginName: user?.loginName ?? "", organizationId: user?.orgId ?? "" },
      ...(f.password ? { password: at(f.password.checkedAt) } : {}),
      ...(f.totp ? { totp: at(f.totp.checkedAt) } : {}),
      ...(f.otpEmail ? { otpEmail: at(f.otpEmail.checkedAt) } : {}),
      ...(f.otpSms ? { otpSms: at(f.otpSms.checkedAt) } : {}),
      ...(f.webAuthN ? { webAuthN: { ...at(f.webAuthN.checkedAt), userVerified: f.webAuthN.userVerified } } : {}),
      ...(f.idpIntent ? { intent: { ...at(f.idpIntent.checkedAt), idpId: f.idpIntent.idpId } } : {}),
    },
    ...(row.expiresAt ? { expirationDate: timestampFromDate(row.expiresAt) } : {}),
  });
}

/** The callback URL: the client's redirect URI with the response in its query or fragment. */
function callbackUrl(request: StoredAuthorization, params: Record<string, string>): string {
  const url = new URL(request.redirectUri);
  const encoded = new URLSearchParams(Object.entries(params).filter(([, v]) => v));
  if (request.responseMode === "fragment") url.hash = encoded.toString();
  else for (const [k, v] of encoded) url.searchParams.append(k, v);
  return url.toString();
}

export function sessionService(deps: SessionServiceDeps): ServiceImpl<typeof SessionService> {
  const search = new SessionSearch(deps.db, deps.cache);
  const instanceOf = (ctx: HandlerContext) => callInfo(ctx).target.instance.id;
  const creatorOf = (ctx: HandlerContext) => callInfo(ctx).caller.userId;
  const pendingRequest = async (instanceId: string, id: string) => {
    const found = await deps.authRequests.byId(instanceId, id);
    if (found?.state !== "pending" || found.expiresAt.getTime() < deps.clock.now())
      throw errors.notFound("AUTHR-n0tf", `auth request "${id.slice(0, 200)}" not found, completed or expired`);
    return found;
  };
  return {
    async createSession(req, ctx) {
      const r = await createSession(deps, {
        instanceId: instanceOf(ctx),
        creator: creatorOf(ctx),
        checks: checksOf(req.checks),
        lifetimeS: lifetimeOf(req.lifetime),
        ...challengesOf(req.challenges, ctx),
      });
      return create(CreateSessionResponseSchema, { details: detailsOf(r.event), sessionToken: r.token, ...challengesOut(r.webAuthNOptions) });
    },

    async setSession(req, ctx) {
      const a = {
        instanceId: instanceOf(ctx),
        creator: creatorOf(ctx),
        id: req.id,
        token: req.sessionToken,
        checks: checksOf(req.checks),
        lifetimeS: lifetimeOf(req.lifetime),
        ...challengesOf(req.challenges, ctx),
      };
      const r = await checkSession(deps, a);
      return create(SetSessionResponseSchema, { details: detailsOf(r.event), sessionToken: r.token, ...challengesOut(r.webAuthNOptions) });
    },

    async getSession(req, ctx) {
      const [found] = await search.byIds(instanceOf(ctx), [req.id]);
      if (!found) throw errors.notFound("SESS-n0t1", `session "${req.id}" not found`);
      return create(GetSessionResponseSchema, { session: toSession(found.row, found.user) });
    },

    async searchSessions(req, ctx) {
      const page = await search.search(instanceOf(ctx), searchRequestOf(req, sessionFilterOf), listWindow(req.query));
      return create(SearchSessionsResponseSchema, { details: listDetails(page), result: page.rows.map((r) => toSession(r.row, r.user)) });
    },

    async deleteSession(req, ctx) {
      const event = await deleteSession(deps.es, { instanceId: instanceOf(ctx), creator: creatorOf(ctx), id: req.id });
      return create(DeleteSessionResponseSchema, { details: detailsOf(event) });
    },

    async getAuthRequest(req, ctx) {
      const found = await pendingRequest(instanceOf(ctx), req.id);
      const r = found.request as unknown as StoredAuthorization;
      return create(GetAuthRequestResponseSchema, {
        authRequest: create(AuthRequestSchema, {
          id: found.id,
          creationDate: timestampFromDate(found.createdAt),
          clientId: found.clientId,
          scope: r.scopes,
          redirectUri: r.redirectUri,
          prompt: r.prompt,
          uiLocales: (r.uiLocales ?? "").split(" ").filter(Boolean),
          ...(r.loginHint ? { loginHint: r.loginHint } : {}),
          ...(r.maxAge !== undefined ? { maxAge: BigInt(r.maxAge) } : {}),
        }),
      });
    },

    async createCallback(req, ctx) {
      const instanceId = instanceOf(ctx);
      const found = await pendingRequest(instanceId, req.id);
      const request = found.request as unknown as StoredAuthorization;
      if (request.responseType !== "code" || request.responseMode === "form_post")
        throw errors.failedPrecondition("AUTHR-fl0w", "only a code flow answered in the query or the fragment can be completed through a callback");
      const session = await usableSession(deps.db, instanceId, req.session!.sessionId, req.session!.sessionToken);
      const client = await deps.clients.application(instanceId, found.clientId);
      if (client?.app.state !== "active" || !client.projectActive) throw errors.failedPrecondition("AUTHR-cl1t", "the client of the request is inactive");
      const factors = session.factors as Partial<SessionFactors>;
      if (!factors.password && !factors.webAuthN?.userVerified && !factors.idpIntent)
        throw errors.failedPrecondition("AUTHR-cred", "session: the user proved neither a password, a passkey nor a sign-in through a provider (check one)");
      // Active, in an active organisation (usableUser): as every sign-in.
      const user = await deps.tenancy.usableUser(session.userId);
      if (!user) throw errors.failedPrecondition("AUTHR-us3r", "session: the user cannot sign in");
      const named = await deps.tenancy.requestedOrg(instanceId, request.scopes);
      if (named !== undefined && named?.id !== user.orgId)
        throw errors.failedPrecondition("AUTHR-0rg1", "session: the user is not a member of the organization the request names (its scope)");
      if (!(await grantAllowsSignIn(deps.projects, deps.userGrants, client.app.projectId, user.id)))
        throw errors.failedPrecondition("AUTHR-gr4n", "session: the user has no grant of the application's project, which checks roles");
      const login = await deps.settings.values("login", inheritanceChain({ type: "org", instanceId, orgId: user.orgId }));
      // A sign-in with a local credential (a password, a passkey) is forced by force_mfa_local_only too (security
      // review, finding 6; the built-in login UI's rule); one through a provider alone by force_mfa only.
      const local = !!(factors.password || factors.webAuthN?.userVerified);
      if ((login.force_mfa || (login.force_mfa_local_only && local)) && !session.amr.includes("mfa"))
        throw errors.failedPrecondition("AUTHR-mfa0", "session: the organisation requires a second factor (check a TOTP code)");
      // As the built-in login UI: a password that must be changed signs nobody in until it is.
      const mustChange = factors.password && (await mustChangePassword(deps.db, user.id));
      if (mustChange)
        throw errors.failedPrecondition(
          "AUTHR-pwch",
          "session: the user must change its password first (ChangePassword with the current password), then check the new one",
        );
      // prompt=login and max_age: a credential proved for this request, or recently enough (the browser callback's rule).
      const stale = staleSignIn(request, found.createdAt, session.authTime, deps.clock.now());
      if (stale === "prompt=login")
        throw errors.failedPrecondition("AUTHR-l0gn", "session: the request asks for a new sign-in (prompt=login); check the credentials again");
      if (stale === "max_age")
        throw errors.failedPrecondition("AUTHR-m4xa", "session: the sign-in is older than the request's max_age; check the credentials again");
      const code = randomBytes(32).toString("base64url");
      const succeeded = await succeedAuthRequest(deps.es, {
        instanceId,
        id: found.id,
        userId: session.userId,
        sessionId: session.id,
        authTime: session.authTime,
        amr: session.amr,
        codeHash: createHash("sha256").update(code).digest("base64url"),
        expiresAt: new Date(deps.clock.now() + CODE_LIFETIME_MS),
      });
      if (!succeeded) throw errors.failedPrecondition("AUTHR-d0ne", "the authorization request was completed already");
      const iss = deps.issuerOf(clientOf(ctx));
      return create(CreateCallbackResponseSchema, { callbackUrl: callbackUrl(request, { code, state: request.state ?? "", iss }) });
    },
  };
}
