// Signs a user in with openid-client: discovery, the authorization URL with PKCE, the code exchange and
// userinfo. ISSUER, CLIENT_ID, CLIENT_SECRET and REDIRECT_URI come from the environment; the URL the browser
// is sent back to after the sign-in is read from stdin (a web app's callback route gets it as its request).
import { createInterface } from "node:readline/promises";
import * as client from "openid-client";

const { ISSUER = "http://localhost:8080", CLIENT_ID, CLIENT_SECRET, REDIRECT_URI = "http://localhost:3000/callback" } = process.env;
// Plain http is for a server on your own machine only.
const insecure = ISSUER.startsWith("http:") ? [client.allowInsecureRequests] : [];
const config = await client.discovery(new URL(ISSUER), CLIENT_ID, CLIENT_SECRET, undefined, { execute: insecure });

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: REDIRECT_URI,
  // urn:svc:iam:org:project:id:svc:aud: the access token also authenticates calls to this server's API
  scope: "openid profile email urn:svc:iam:org:project:id:svc:aud",
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: "S256",
  state,
});
console.log(`Open this URL in a browser and sign in:\n${url.href}`);

const prompt = createInterface({ input: process.stdin, output: process.stderr });
const callback = new URL(await prompt.question("The URL you were sent back to: "));
prompt.close();
const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
const userinfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims().sub);
console.log(JSON.stringify({ userinfo, access_token: tokens.access_token }, null, 2));
