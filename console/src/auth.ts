// Sign-in as a browser-based OAuth client (draft-ietf-oauth-browser-based-apps): the authorization code flow with
// PKCE against this server, tokens in this module's memory only (never in storage), the refresh token rotated by
// the server and used before the access token runs out, sign-out by revocation and the end-session endpoint.
import * as oauth from "oauth4webapi";

export interface Environment {
  issuer: string;
  clientId: string | null;
}

interface Tokens {
  access: string;
  refresh?: string;
  idToken?: string;
  /** ms since the epoch */
  expiresAt: number;
  sub: string;
  name: string;
}

export const CALLBACK_PATH = "/ui/console/auth/callback";
const HOME = "/ui/console/";
/** The PKCE verifier and state live in sessionStorage for the round trip to the login page only. */
const PENDING_KEY = "console.signin";
// the last one: an access token the APIs accept (audience svc)
const SCOPES = "openid profile email offline_access urn:svc:iam:org:project:id:svc:aud";

let env: Environment;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let tokens: Tokens | undefined;
let refreshing: Promise<void> | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

/** http is allowed only when the console itself is served over http (a trial on localhost). */
const options = (): { [oauth.allowInsecureRequests]?: boolean } => (location.protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {});
const redirectUri = () => `${env.issuer}${CALLBACK_PATH}`;

export async function loadEnvironment(): Promise<Environment> {
  const res = await fetch(`${HOME}environment.json`, { cache: "no-store" });
  if (!res.ok) throw new Error(`the console's environment could not be read (${res.status})`);
  env = (await res.json()) as Environment;
  if (!env.clientId) throw new Error("this instance has no active console application");
  client = { client_id: env.clientId };
  const issuer = new URL(env.issuer);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options(), algorithm: "oidc" }));
  return env;
}

/** Leaves for the login page; comes back at the callback, then at `returnTo`. */
export async function signIn(returnTo = location.pathname + location.search): Promise<never> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, returnTo: returnTo.startsWith(HOME) ? returnTo : HOME }));
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri(),
    response_type: "code",
    scope: SCOPES,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ui_locales: navigator.languages.join(" "),
  }).toString();
  location.assign(url.toString());
  return new Promise<never>(() => {});
}

/** At the callback: the code for tokens; returns where the user was going. */
export async function completeSignIn(): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? "null") as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING_KEY);
  if (!pending) throw new Error("the sign-in was not started here, or was completed already");
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), pending.state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri(), pending.verifier, options());
  keep(await oauth.processAuthorizationCodeResponse(as, client, response));
  return pending.returnTo;
}

function keep(r: oauth.TokenEndpointResponse) {
  const claims = oauth.getValidatedIdTokenClaims(r);
  const sub = claims?.sub ?? tokens?.sub ?? "";
  const name = String(claims?.name ?? claims?.preferred_username ?? tokens?.name ?? sub);
  tokens = {
    access: r.access_token,
    refresh: r.refresh_token ?? tokens?.refresh,
    idToken: r.id_token ?? tokens?.idToken,
    expiresAt: Date.now() + (r.expires_in ?? 300) * 1000,
    sub,
    name,
  };
  clearTimeout(timer);
  // renewed quietly at 80 % of its lifetime, so that calls never wait for it
  if (tokens.refresh) timer = setTimeout(() => void refresh().catch(() => {}), Math.max(5_000, (r.expires_in ?? 300) * 800));
}

/** One refresh at a time: every caller waiting for a new token shares it. */
function refresh(): Promise<void> {
  refreshing ??= (async () => {
    try {
      if (!tokens?.refresh) throw new Error("no refresh token");
      const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh, options());
      keep(await oauth.processRefreshTokenResponse(as, client, response));
    } finally {
      refreshing = undefined;
    }
  })();
  return refreshing;
}

export function signedIn(): boolean {
  return tokens !== undefined;
}

/** Who is signed in: the ID token's subject and name. */
export function profile(): { sub: string; name: string } {
  return { sub: tokens?.sub ?? "", name: tokens?.name ?? "" };
}

/** A current access token: refreshed when it is about to run out; a new sign-in when that fails. */
export async function accessToken(): Promise<string> {
  if (!tokens) return signIn();
  if (tokens.expiresAt - Date.now() < 10_000) {
    try {
      await refresh();
    } catch {
      return signIn();
    }
  }
  return tokens!.access;
}

/** After UNAUTHENTICATED: a refresh, once; the caller retries. */
export async function renew(): Promise<void> {
  try {
    await refresh();
  } catch {
    await signIn();
  }
}

export async function signOut(): Promise<never> {
  const t = tokens;
  tokens = undefined;
  clearTimeout(timer);
  if (t?.refresh && as.revocation_endpoint) {
    await oauth
      .revocationRequest(as, client, oauth.None(), t.refresh, { ...options(), additionalParameters: { token_type_hint: "refresh_token" } })
      .catch(() => {});
  }
  const url = new URL(as.end_session_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    post_logout_redirect_uri: `${env.issuer}${HOME}`,
    ...(t?.idToken ? { id_token_hint: t.idToken } : {}),
  }).toString();
  location.assign(url.toString());
  return new Promise<never>(() => {});
}
