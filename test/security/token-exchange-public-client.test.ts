import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenTypes as T } from "../../src/oidc/grants/token-exchange.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, codeOverHttp, createApp, rpConfig } from "../oidc/rp.js";

// Security review #11: token exchange turned alice's ID token of the web app into a 12 h access token for a public
// client of the same project (no secret), with the web app's client ID in its audience. Reproduced here as the
// review did: the flag on, an SPA (auth method NONE, token exchange grant) beside the web app in one project.

const TE = "urn:ietf:params:oauth:grant-type:token-exchange";
const PASSWORD = "Secr3t!pass";

let t: TestServer;
let web: Awaited<ReturnType<typeof createApp>>;
let webConfig: client.Configuration;
/** A public client of web's project with the token exchange grant type. */
let spaConfig: client.Configuration;
/** A confidential client of web's project with the token exchange grant type. */
let siblingConfig: client.Configuration;
let siblingId: string;
/** alice's tokens from web's code flow. */
let alice: client.TokenEndpointResponse;

const exchange = (config: client.Configuration, params: Record<string, string>) => client.genericGrantRequest(config, TE, params);
/** The OAuth error of a refused exchange (a 401 comes as a WWW-Authenticate challenge, reported as the cause). */
async function refusal(p: Promise<unknown>) {
  const e = await p.then(
    () => undefined,
    (err: { error?: string; error_description?: string; cause?: { parameters: { error?: string; error_description?: string } }[] }) => err,
  );
  if (!e) throw new Error("the exchange succeeded");
  const challenge = Array.isArray(e.cause) ? e.cause[0]?.parameters : undefined;
  return { error: e.error ?? challenge?.error, description: e.error_description ?? challenge?.error_description };
}

/** An application in an existing project (createApp makes a project of its own). */
async function appInProject(projectId: string, name: string, oidc: Record<string, unknown>) {
  const r = await rest(t.url, "POST", `/resources/v3alpha/projects/${projectId}/applications`, { token: t.adminPat, body: { name, oidc } });
  if (r.status !== 201) throw new Error(`app: ${JSON.stringify(r.body)}`);
  return { clientId: r.body.clientId as string, clientSecret: r.body.clientSecret as string };
}

beforeAll(async () => {
  t = await startTestServer();
  await rest(t.url, "PUT", "/v2/features/instance", { token: t.adminPat, body: { oidcTokenExchange: true } });
  await addHuman(t, "alice", PASSWORD);
  web = await createApp(t, "web", {
    redirectUris: ["https://rp.example.com/cb"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  webConfig = await rpConfig(t.url, web.clientId, web.clientSecret, client.ClientSecretBasic(web.clientSecret));
  const spa = await appInProject(web.projectId, "spa", {
    redirectUris: ["https://rp.example.com/spa"],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE", "OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
    appType: "OIDC_APP_TYPE_USER_AGENT",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_NONE",
  });
  spaConfig = await rpConfig(t.url, spa.clientId, undefined, client.None());
  const sibling = await appInProject(web.projectId, "sibling", {
    grantTypes: ["OIDC_GRANT_TYPE_TOKEN_EXCHANGE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
  siblingId = sibling.clientId;
  siblingConfig = await rpConfig(t.url, sibling.clientId, sibling.clientSecret, client.ClientSecretBasic(sibling.clientSecret));
  const { location } = await codeOverHttp(
    t,
    { client_id: web.clientId, redirect_uri: "https://rp.example.com/cb", response_type: "code", scope: "openid profile" },
    "alice",
    PASSWORD,
  );
  alice = await client.authorizationCodeGrant(webConfig, new URL(location));
});
afterAll(() => t?.close());

describe("security review #11: token exchange for public clients and other clients' tokens", () => {
  it("a public client cannot exchange at all (invalid_client), not even alice's ID token of its sibling", async () => {
    const f = await refusal(exchange(spaConfig, { subject_token: alice.id_token!, subject_token_type: T.idToken }));
    expect(f.error).toBe("invalid_client");
    const withAccess = await refusal(exchange(spaConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken }));
    expect(withAccess.error).toBe("invalid_client");
  });

  it("an ID token is exchanged only by the client it was issued to (azp), not by another client of the project", async () => {
    const f = await refusal(exchange(siblingConfig, { subject_token: alice.id_token!, subject_token_type: T.idToken }));
    expect(f).toEqual({ error: "invalid_request", description: "subject_token was not issued for this client" });
    // the client it was issued to still may
    const own = await exchange(webConfig, { subject_token: alice.id_token!, subject_token_type: T.idToken });
    expect(await client.tokenIntrospection(webConfig, own.access_token)).toMatchObject({ active: true, client_id: web.clientId });
  });

  it("an exchanged token never names another client: the audience is capped to what the requesting client may hold", async () => {
    // alice's access token of web is meant for web's project, so the sibling may exchange it, but only for itself
    const r = await exchange(siblingConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken });
    const seen = await client.tokenIntrospection(webConfig, r.access_token);
    expect(seen).toMatchObject({ active: true, client_id: siblingId });
    expect(seen.aud).not.toContain(web.clientId);
    expect(seen.aud).toEqual([web.projectId]);
    const asked = await refusal(exchange(siblingConfig, { subject_token: alice.access_token, subject_token_type: T.accessToken, audience: web.clientId }));
    expect(asked.error).toBe("invalid_target");
  });
});
