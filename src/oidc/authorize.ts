import { inheritanceChain } from "../domain/contexts.js";
import { onIssuer } from "../domain/applications.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { addAuthRequest, CODE_LIFETIME_MS, succeedAuthRequest } from "../command/auth-requests.js";
import { useSession } from "../command/sessions.js";
import { olderThanMaxAge, staleSignIn } from "../query/auth-requests.js";
import type { BrowserSession } from "../query/sessions.js";
import { agentHashOf } from "../web/browser.js";
import { userClaims } from "./claims.js";
import type { OAuthClient } from "./clients.js";
import { paths, type OidcDeps, type RequestScope } from "./context.js";
import { OAuthError, oauth } from "./errors.js";
import { issueUserTokens } from "./issue.js";
import { decodeJwt, verifyRs256 } from "./jwt.js";
import { AUTHORIZE_PARAMETER_LIMITS, checkLengths, paramsOf } from "./params.js";
import { defaultMode, errorPage, responseModes, sendToClient, type ResponseMode } from "./responses.js";
import { parseScopes } from "./scopes.js";
import { randomToken, sha256 } from "./tokens.js";
import { grantAllowsSignIn } from "../query/user-grants.js";

/** The response types of the authorize endpoint, each with the grant type it begins (RFC 7591 §2.1). */
export const responseTypes = { code: "authorization_code", id_token: "implicit", "id_token token": "implicit" } as const;

/** What an authorization request asked for, once validated; kept with the request until its code is redeemed. */
export interface ValidatedRequest {
  redirectUri: string;
  responseType: keyof typeof responseTypes;
  responseMode: ResponseMode;
  scopes: string[];
  state?: string;
  nonce?: string;
  codeChallenge?: string;
  prompt: string[];
  maxAge?: number;
  loginHint?: string;
  uiLocales?: string;
  /** The subject of a valid id_token_hint. */
  hintSub?: string;
}

export const CALLBACK = `${paths.authorize}/callback`;
const REQUEST_GONE = "the sign-in request is unknown, used or expired; start again from the application";
const PROMPTS = ["none", "login", "consent", "select_account", "create"];
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(:\d+)?(\/.*)?$/;

/**
 * Exact match (a registered path on the request's issuer); for native apps, loopback IP redirect URIs may differ in
 * the port alone (RFC 8252 §7.3).
 */
export function redirectAllowed(client: OAuthClient, uri: string, issuer: string): boolean {
  const registered = client.oidc!.redirectUris.map((r) => onIssuer(r, issuer));
  if (registered.includes(uri)) return true;
  if (client.oidc!.appType !== "native" || !LOOPBACK.test(uri)) return false;
  const strip = (u: string) => {
    const x = new URL(u);
    x.port = "";
    return x.toString();
  };
  return registered.some((r) => LOOPBACK.test(r) && strip(r) === strip(uri));
}

/** The response type, its values in any order (OAuth 2.0 Multiple Response Types §3). */
function responseTypeOf(value: string | undefined): ValidatedRequest["responseType"] | undefined {
  const key = (value ?? "").split(" ").filter(Boolean).sort().join(" ");
  return Object.hasOwn(responseTypes, key) ? (key as ValidatedRequest["responseType"]) : undefined;
}

/**
 * GET/POST /oauth/v2/authorize. Errors before the client and its redirect URI are known show a page and never
 * redirect; after that they go back to the client with error, error_description, state and iss.
 */
export async function authorize(deps: OidcDeps, s: RequestScope, req: FastifyRequest, reply: FastifyReply) {
  let params: Record<string, string>;
  try {
    params = paramsOf(req);
    // These two are checked before the client is known, so their errors are a page too.
    checkLengths(params, ["client_id", "redirect_uri"], AUTHORIZE_PARAMETER_LIMITS);
  } catch (e) {
    return errorPage(reply, 400, "invalid_request", (e as Error).message);
  }
  if (!params.client_id) return errorPage(reply, 400, "invalid_request", "client_id is missing");
  const client = await deps.clients.application(s.instance.id, params.client_id);
  if (!client?.oidc || !client.active) return errorPage(reply, 400, "invalid_client", "unknown or inactive client");
  if (!params.redirect_uri) return errorPage(reply, 400, "invalid_request", "redirect_uri is missing");
  if (!redirectAllowed(client, params.redirect_uri, s.issuer))
    return errorPage(reply, 400, "invalid_request", "redirect_uri is not registered for this client");

  const responseType = responseTypeOf(params.response_type);
  const requestedMode = params.response_mode as ResponseMode | undefined;
  // Unknown response modes are ignored: the response type's default applies.
  const mode: ResponseMode = requestedMode && responseModes.includes(requestedMode) ? requestedMode : defaultMode(responseType ?? "code");
  // Tokens never travel in a query.
  const safeMode: ResponseMode = mode === "query" && responseType && responseType !== "code" ? "fragment" : mode;
  // A state too long to be accepted is not echoed either: the error names it.
  const state = params.state && params.state.length <= AUTHORIZE_PARAMETER_LIMITS.state! ? params.state : undefined;
  const fail = (err: OAuthError) =>
    sendToClient(reply, params.redirect_uri!, safeMode, { error: err.error, error_description: err.message, ...(state ? { state } : {}), iss: s.issuer });
  try {
    const request = await validate(deps, s, client, params, responseType, safeMode);
    const id = await addAuthRequest(deps.es, {
      instanceId: s.instance.id,
      clientId: client.clientId,
      request,
      expiresAt: new Date(deps.clock.now() + deps.tokens.lifetimes.authRequestMs),
    });
    const sessions = await browserSessions(deps, s, req);
    const now = deps.clock.now();
    const fresh = sessions.filter((x) => !olderThanMaxAge(request.maxAge, x.authTime, now));
    const hinted = request.hintSub ? fresh.filter((x) => x.userId === request.hintSub) : fresh;
    if (request.prompt.includes("none")) {
      if (!sessions.length || !fresh.length) throw oauth.loginRequired("the user is not signed in (or not recently enough), and prompt is none");
      if (hinted.length !== 1) throw oauth.interactionRequired("the user must choose an account, and prompt is none");
      return complete(deps, s, reply, id, client, request, hinted[0]!);
    }
    const mustLogin = request.prompt.includes("login") || request.prompt.includes("create") || (sessions.length > 0 && !fresh.length);
    if (!mustLogin && !request.prompt.includes("select_account") && hinted.length === 1 && (sessions.length === 1 || request.hintSub)) {
      return complete(deps, s, reply, id, client, request, hinted[0]!);
    }
    // A custom login UI announces itself with this header: the request goes to it, to be finished through the
    // sessions API (CreateCallback), when the instance names one (login settings custom_login_url).
    if (req.headers["x-svc-login-client"]) {
      const { custom_login_url: custom } = await deps.settings.values("login", inheritanceChain({ type: "instance", instanceId: s.instance.id }));
      if (custom) {
        const to = new URL(custom);
        to.searchParams.set("authRequest", id);
        return reply.status(303).header("location", to.toString()).header("cache-control", "no-store").send();
      }
    }
    const login = new URLSearchParams({ return_to: `${CALLBACK}?id=${id}` });
    // The account choice: when the client asks for it (OIDC Core §3.1.2.1, even with one session: the user may
    // take it or sign in with another account), or when the browser holds several sessions.
    if (mustLogin) login.set("prompt", "login");
    else if (request.prompt.includes("select_account") || sessions.length > 1) login.set("prompt", "select_account");
    if (request.loginHint) login.set("login_hint", request.loginHint);
    if (request.uiLocales) login.set("ui_locales", request.uiLocales);
    const path = request.prompt.includes("create") ? "/ui/login/register" : "/ui/login";
    return reply.status(303).header("location", `${path}?${login}`).header("cache-control", "no-store").send();
  } catch (e) {
    if (e instanceof OAuthError) return fail(e);
    req.log.error({ err: e }, "authorize failure");
    return fail(oauth.serverError("unexpected condition"));
  }
}

async function validate(
  deps: OidcDeps,
  s: RequestScope,
  client: OAuthClient,
  params: Record<string, string>,
  responseType: ValidatedRequest["responseType"] | undefined,
  mode: ResponseMode,
): Promise<ValidatedRequest> {
  checkLengths(params, Object.keys(AUTHORIZE_PARAMETER_LIMITS), AUTHORIZE_PARAMETER_LIMITS);
  if (params.request || params.request_uri)
    throw new OAuthError(params.request ? "request_not_supported" : "request_uri_not_supported", "request objects are not supported");
  if (!params.response_type) throw oauth.invalidRequest("response_type is missing");
  if (!responseType) throw oauth.unsupportedResponseType(`the response type ${params.response_type.slice(0, 50)} is not supported`);
  if (!client.oidc!.responseTypes.includes(responseType)) throw oauth.unauthorizedClient(`the client may not use the response type ${responseType}`);
  const scopes = parseScopes(params.scope, "drop");
  if (!scopes.includes("openid")) throw oauth.invalidScope("the scope must contain openid");
  if (responseType !== "code" && !params.nonce) throw oauth.invalidRequest("nonce is required for the implicit flow");
  if (params.code_challenge_method && params.code_challenge_method !== "S256") throw oauth.invalidRequest("code_challenge_method must be S256");
  if (params.code_challenge && !/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge))
    throw oauth.invalidRequest("code_challenge must be a base64url SHA-256 (43 characters)");
  if (params.code_challenge && !params.code_challenge_method) throw oauth.invalidRequest("code_challenge_method is missing (S256)");
  if (responseType === "code" && client.authMethod === "none" && !params.code_challenge)
    throw oauth.invalidRequest("PKCE (code_challenge with S256) is required for this client");
  const prompt = (params.prompt ?? "").split(" ").filter(Boolean);
  if (prompt.some((p) => !PROMPTS.includes(p))) throw oauth.invalidRequest("prompt has an unknown value");
  if (prompt.includes("none") && prompt.length > 1) throw oauth.invalidRequest("prompt none cannot be combined with other values");
  let maxAge: number | undefined;
  if (params.max_age !== undefined) {
    if (!/^\d{1,9}$/.test(params.max_age)) throw oauth.invalidRequest("max_age must be a non-negative integer");
    maxAge = Number(params.max_age);
  }
  let hintSub: string | undefined;
  if (params.id_token_hint) {
    // Our own ID token, expired or not: only the signature counts (alg none never does).
    const jwt = decodeJwt(params.id_token_hint);
    const keys = await deps.keys.published(s.instance.id);
    if (!jwt || !verifyRs256(jwt, (kid) => keys.find((k) => k.kid === kid)?.key) || jwt.payload.iss !== s.issuer)
      throw oauth.invalidRequest("id_token_hint is not a valid ID token of this issuer");
    hintSub = String(jwt.payload.sub);
  }
  return {
    redirectUri: params.redirect_uri!,
    responseType,
    responseMode: mode,
    scopes,
    ...(params.state ? { state: params.state } : {}),
    ...(params.nonce ? { nonce: params.nonce } : {}),
    ...(params.code_challenge ? { codeChallenge: params.code_challenge } : {}),
    prompt,
    ...(maxAge !== undefined ? { maxAge } : {}),
    ...(params.login_hint ? { loginHint: params.login_hint } : {}),
    ...(params.ui_locales ? { uiLocales: params.ui_locales } : {}),
    ...(hintSub ? { hintSub } : {}),
  };
}

/** The sessions of the browser (its agent cookie) in this instance whose users may sign in. */
async function browserSessions(deps: OidcDeps, s: RequestScope, req: FastifyRequest): Promise<BrowserSession[]> {
  const agentHash = agentHashOf(req);
  return agentHash ? deps.sessions.ofBrowser(s.instance.id, agentHash) : [];
}

/** The login UI sends the browser back here with the session it signed in (or chose). */
export async function callback(deps: OidcDeps, s: RequestScope, req: FastifyRequest, reply: FastifyReply) {
  const q = req.query as Record<string, string>;
  const found = q.id ? await deps.authRequests.byId(s.instance.id, q.id) : null;
  if (found?.state !== "pending" || found.expiresAt.getTime() < deps.clock.now()) {
    return errorPage(reply, 400, "invalid_request", REQUEST_GONE);
  }
  const request = found.request as unknown as ValidatedRequest;
  const client = await deps.clients.application(s.instance.id, found.clientId);
  if (!client?.active) return errorPage(reply, 400, "invalid_client", "unknown or inactive client");
  const session = (await browserSessions(deps, s, req)).find((x) => x.id === q.session);
  const fail = (err: OAuthError) =>
    sendToClient(reply, request.redirectUri, request.responseMode, {
      error: err.error,
      error_description: err.message,
      ...(request.state ? { state: request.state } : {}),
      iss: s.issuer,
    });
  if (!session) return fail(oauth.loginRequired("the user did not sign in"));
  // prompt=login and max_age need an authentication made for this request (or recent enough): the login UI may
  // hand back any session of the browser, an old one too (security review #18).
  const stale = staleSignIn(request, found.createdAt, session.authTime, deps.clock.now());
  if (stale) return fail(oauth.loginRequired(`the user did not sign in again (${stale})`));
  return complete(deps, s, reply, found.id, client, request, session);
}

/** The user is known: a code (code flow) or tokens (implicit) go back to the client. */
async function complete(
  deps: OidcDeps,
  s: RequestScope,
  reply: FastifyReply,
  id: string,
  client: OAuthClient,
  request: ValidatedRequest,
  session: BrowserSession,
) {
  const user = await deps.users.byId(s.instance.id, session.userId);
  // The session was read a moment ago among those of active users: a user gone since is a server-side race.
  if (!user) throw new Error(`the user ${session.userId} of the session is gone`);
  const base = { ...(request.state ? { state: request.state } : {}), iss: s.issuer };
  // A request naming an organisation (urn:svc:iam:org:id:… or …:domain:primary:…) is for its users only.
  const named = await deps.tenancy.requestedOrg(s.instance.id, request.scopes);
  if (named !== undefined && named?.id !== user.orgId) {
    const description = named ? "the user is not a member of the organization the application asked for" : "the organization the scope names does not exist";
    return sendToClient(reply, request.redirectUri, request.responseMode, { error: "access_denied", error_description: description, ...base });
  }
  // A project that checks roles (project_role_check) lets only users with a grant of it sign in to its applications.
  if (!(await grantAllowsSignIn(deps.projects, deps.userGrants, client.projectId, user.id))) {
    const description = "the user has no grant of the application's project";
    return sendToClient(reply, request.redirectUri, request.responseMode, { error: "access_denied", error_description: description, ...base });
  }
  const code = request.responseType === "code" ? randomToken() : undefined;
  // Signing in to an application, silently too, is a use of the session: its idle lifetime starts again.
  await useSession(deps.es, deps.sessions, session.id);
  const succeeded = await succeedAuthRequest(deps.es, {
    instanceId: s.instance.id,
    id,
    userId: user.id,
    sessionId: session.id,
    authTime: session.authTime,
    amr: session.amr,
    codeHash: code ? sha256(code) : null,
    expiresAt: new Date(deps.clock.now() + CODE_LIFETIME_MS),
  });
  // Another callback for the same request was first (a double submit), or the request expired meanwhile.
  if (!succeeded) return errorPage(reply, 400, "invalid_request", REQUEST_GONE);
  if (code) return sendToClient(reply, request.redirectUri, request.responseMode, { code, ...base });
  // The implicit flow gives no refresh token, so offline_access is not granted (RFC 6749 §4.2.2: no refresh token).
  const scopes = request.scopes.filter((x) => x !== "offline_access");
  // Implicit "id_token": only an ID token, carrying the scope claims (there is no access token to ask userinfo
  // with), and no access token is made, so no preaccesstoken execution runs for a token nobody gets. Like every
  // implicit response (the specification's authorization endpoint) it says token_type, expires_in (here the ID
  // token's lifetime, the only token given) and the granted scope (RFC 6749 §4.2.2, OIDC Core §3.2.2.5).
  if (request.responseType === "id_token") {
    const idToken = await deps.tokens.idToken(s.instance.id, {
      iss: s.issuer,
      sub: user.id,
      aud: [client.clientId],
      azp: client.clientId,
      auth_time: Math.floor(session.authTime.getTime() / 1000),
      amr: session.amr,
      nonce: request.nonce,
      sid: session.id,
      ...userClaims(user, scopes),
    });
    return sendToClient(reply, request.redirectUri, request.responseMode, {
      id_token: idToken,
      token_type: "Bearer",
      expires_in: String(Math.floor(deps.tokens.lifetimes.idTokenMs / 1000)),
      scope: scopes.join(" "),
      ...base,
    });
  }
  // Implicit "id_token token": both, as the code grant would give them; no refresh token.
  const { response } = await issueUserTokens(deps, s, {
    client,
    user,
    scopes,
    sessionId: session.id,
    authTime: session.authTime,
    amr: session.amr,
    ...(request.nonce ? { nonce: request.nonce } : {}),
    withRefresh: false,
  });
  return sendToClient(reply, request.redirectUri, request.responseMode, {
    id_token: response.id_token!,
    access_token: response.access_token,
    token_type: "Bearer",
    expires_in: String(response.expires_in),
    scope: response.scope,
    ...base,
  });
}
