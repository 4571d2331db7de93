import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { responseTypes } from "../../src/oidc/authorize.js";
import { tokenGrants } from "../../src/oidc/grants/index.js";
import type { TokenGrant } from "../../src/oidc/grants/grant.js";
import { introspectionAuthMethods } from "../../src/oidc/introspection.js";
import { revocationAuthMethods } from "../../src/oidc/revocation.js";
import { projectRoot } from "../../src/storage/paths.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// What discovery (OIDC Discovery 1.0 §3, RFC 8414 §2) says the server supports must be what it does: the
// grant types and client authentication methods come from the grant modules registered in
// src/oidc/grants/index.ts, not from a second list.

let t: TestServer;
let doc: Record<string, unknown>;

beforeAll(async () => {
  t = await startTestServer();
  doc = (await rest(t.url, "GET", "/.well-known/openid-configuration")).body;
});
afterAll(() => t?.close());

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** The grant types of the IANA "OAuth Parameters" registry: the token endpoint is asked about each. */
const ianaGrantTypes = [
  "authorization_code",
  "implicit",
  "password",
  "client_credentials",
  "refresh_token",
  "urn:ietf:params:oauth:grant-type:device_code",
  "urn:ietf:params:oauth:grant-type:jwt-bearer",
  "urn:ietf:params:oauth:grant-type:saml2-bearer",
  "urn:ietf:params:oauth:grant-type:token-exchange",
  "urn:ietf:params:oauth:grant-type:uma-ticket",
  "urn:openid:params:grant-type:ciba",
];

const grantsDir = join(projectRoot, "src", "oidc", "grants");
/** The files of src/oidc/grants that are not grants: the registry and the shape every grant module has. */
const notGrants = ["index.ts", "grant.ts"];

describe("discovery lists what the grant registry declares", () => {
  it("every grant module in src/oidc/grants is registered", async () => {
    const registered = tokenGrants.map((g) => g.grantType);
    for (const file of readdirSync(grantsDir).filter((f) => f.endsWith(".ts") && !notGrants.includes(f))) {
      const module = (await import(join(grantsDir, file))) as TokenGrant;
      expect(registered, `${file} is not in the registry`).toContain(module.grantType);
    }
  });

  it("grant_types_supported: the registered grants, and those the authorize endpoint's response types begin", () => {
    // A gated grant (token exchange: the oidc_token_exchange flag, off on a first instance) only while its gate is open.
    const ungated = tokenGrants.filter((g) => !g.enabled);
    expect(sorted(doc.grant_types_supported as string[])).toEqual(sorted([...ungated.map((g) => g.grantType), ...Object.values(responseTypes)]));
  });

  it("token_endpoint_auth_methods_supported: every method some registered grant accepts", () => {
    expect(sorted(doc.token_endpoint_auth_methods_supported as string[])).toEqual(sorted(tokenGrants.flatMap((g) => g.clientAuthMethods)));
  });

  it("introspection and revocation auth methods: those their endpoints accept", () => {
    expect(sorted(doc.introspection_endpoint_auth_methods_supported as string[])).toEqual(sorted(introspectionAuthMethods));
    expect(sorted(doc.revocation_endpoint_auth_methods_supported as string[])).toEqual(sorted(revocationAuthMethods));
  });

  it("the token endpoint handles exactly the advertised grant types (RFC 6749 §5.2 unsupported_grant_type for the others)", async () => {
    const handled: string[] = [];
    // Names of Object.prototype too: a grant type is looked up, never found on an object's prototype.
    for (const grantType of [...ianaGrantTypes, "constructor", "toString", "__proto__"]) {
      const r = await rest(t.url, "POST", "/oauth/v2/token", {
        body: new URLSearchParams({ grant_type: grantType }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expect(r.status, `${grantType}: ${JSON.stringify(r.body)}`).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      if (r.body.error !== "unsupported_grant_type") handled.push(grantType);
    }
    // implicit is a grant of the authorize endpoint: it never reaches the token endpoint.
    expect(sorted(handled)).toEqual(sorted((doc.grant_types_supported as string[]).filter((g) => g !== "implicit")));
  });

  it("a gated grant is advertised and handled exactly while its gate is open (token exchange and its flag)", async () => {
    const gated = tokenGrants.filter((g) => g.enabled).map((g) => g.grantType);
    expect(gated).toEqual(["urn:ietf:params:oauth:grant-type:token-exchange"]);
    const answer = async (grantType: string) =>
      (
        await rest(t.url, "POST", "/oauth/v2/token", {
          body: new URLSearchParams({ grant_type: grantType }).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded" },
        })
      ).body.error;
    const advertised = async () => (await rest(t.url, "GET", "/.well-known/openid-configuration")).body.grant_types_supported as string[];
    const flag = (on: boolean) => rest(t.url, "PUT", "/v2/features/instance", { token: t.adminPat, body: { oidcTokenExchange: on } });
    for (const g of gated) {
      expect(await advertised()).not.toContain(g);
      expect(await answer(g)).toBe("unsupported_grant_type");
    }
    expect((await flag(true)).status).toBe(200);
    try {
      const all = await advertised();
      expect(sorted(all)).toEqual(sorted([...tokenGrants.map((g) => g.grantType), ...Object.values(responseTypes)]));
      // handled now: the client is asked for (no client authentication was included)
      for (const g of gated) expect(await answer(g)).toBe("invalid_client");
    } finally {
      await flag(false);
    }
  });
});
