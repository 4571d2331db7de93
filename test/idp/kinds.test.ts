import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { kindMessages } from "../../src/api/idp/kinds.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let orgId: string;
let signingCert: string;

/** A self-signed certificate's base64 DER, as SAML metadata carries it (openssl: node:crypto cannot write X.509). */
function makeCertificate(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-saml-"));
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "k.pem", "-out", "c.pem", "-days", "2", "-subj", "/CN=idp"],
      { cwd: dir, stdio: "ignore", timeout: 30_000 },
    );
    return readFileSync(join(dir, "c.pem"), "utf8")
      .replace(/-----[A-Z ]+-----/g, "")
      .replace(/\s+/g, "");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const metadata = (cert: string) =>
  `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.example.com">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;

const APPLE_KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----";

/** A valid configuration of every kind (proto JSON names, as a REST client writes them), its secret and its type. */
const kinds = () =>
  ({
    oidc: {
      type: 1,
      secret: "clientSecret",
      config: { issuer: "https://op.example.com", client_id: "rp", client_secret: "oidc-s3cret", scopes: ["openid", "email"], use_pkce: true },
    },
    jwt: {
      type: 2,
      secret: undefined,
      config: {
        issuer: "https://jwt.example.com",
        jwt_endpoint: "https://jwt.example.com/jwt",
        keys_endpoint: "https://jwt.example.com/keys",
        header_name: "x-auth",
      },
    },
    ldap: {
      type: 3,
      secret: "bindPassword",
      config: {
        servers: ["ldaps://ldap.example.com:636", "ldap://ldap2.example.com"],
        start_tls: false,
        base_dn: "dc=example,dc=com",
        bind_dn: "cn=admin,dc=example,dc=com",
        bind_password: "ldap-s3cret",
        user_base: "uid",
        user_object_classes: ["inetOrgPerson"],
        user_filters: ["uid", "mail"],
        timeout: "10s",
        attributes: { id_attribute: "uid", email_attribute: "mail", first_name_attribute: "givenName" },
      },
    },
    oauth: {
      type: 4,
      secret: "clientSecret",
      config: {
        client_id: "c",
        client_secret: "oauth-s3cret",
        authorization_endpoint: "https://oauth.example.com/authorize",
        token_endpoint: "https://oauth.example.com/token",
        user_endpoint: "https://oauth.example.com/user",
        scopes: ["read"],
        id_attribute: "id",
      },
    },
    azure_ad: {
      type: 5,
      secret: "clientSecret",
      config: { client_id: "az", client_secret: "azure-s3cret", tenant: { tenant_id: "contoso.onmicrosoft.com" }, email_verified: true },
    },
    github: { type: 6, secret: "clientSecret", config: { client_id: "gh", client_secret: "github-s3cret", scopes: ["user:email"] } },
    github_enterprise: {
      type: 7,
      secret: "clientSecret",
      config: {
        client_id: "ghe",
        client_secret: "ghe-s3cret",
        authorization_endpoint: "https://ghe.example.com/login/oauth/authorize",
        token_endpoint: "https://ghe.example.com/login/oauth/access_token",
        user_endpoint: "https://ghe.example.com/api/v3/user",
      },
    },
    gitlab: { type: 8, secret: "clientSecret", config: { client_id: "gl", client_secret: "gitlab-s3cret", scopes: ["openid"] } },
    gitlab_self_hosted: { type: 9, secret: "clientSecret", config: { client_id: "glsh", client_secret: "glsh-s3cret", issuer: "https://gitlab.example.com" } },
    google: { type: 10, secret: "clientSecret", config: { client_id: "goog", client_secret: "google-s3cret" } },
    apple: { type: 11, secret: "privateKey", config: { client_id: "com.example.web", team_id: "ABCDE12345", key_id: "KEY1234567", private_key: APPLE_KEY } },
    saml: { type: 12, secret: undefined, config: { metadata_xml: metadata(signingCert), binding: "SAML_BINDING_POST", with_signed_request: true } },
  }) as Record<string, { type: number; secret: string | undefined; config: Record<string, unknown> }>;

/** ProviderType's JSON names by number. */
const typeNames = ["", "OIDC", "JWT", "LDAP", "OAUTH", "AZURE_AD", "GITHUB", "GITHUB_ES", "GITLAB", "GITLAB_SELF_HOSTED", "GOOGLE", "APPLE", "SAML"].map(
  (n) => `PROVIDER_TYPE_${n}`,
);

const secretValue = (k: { secret: string | undefined; config: Record<string, unknown> }) =>
  k.secret ? (k.config[k.secret.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] as string) : undefined;

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });
const ids: Record<string, string> = {};

beforeAll(async () => {
  signingCert = makeCertificate();
  t = await startTestServer();
  orgId = await t.org("Kinds");
});
afterAll(() => t?.close());

describe("every identity provider kind as a resource", () => {
  it("is created, read and searched over REST; the secret is write-only and sealed; the get names the callback", async () => {
    for (const [kind, k] of Object.entries(kinds())) {
      const created = await api("POST", `/idps/${kind}?ctx.org_id=${orgId}`, {
        idp: { name: `${kind} provider`, options: { isLinkingAllowed: true } },
        config: k.config,
      });
      expect(created.status, `${kind}: ${JSON.stringify(created.body)}`).toBe(201);
      const id = created.body.details.id as string;
      ids[kind] = id;
      const got = await api("GET", `/idps/${kind}/${id}`);
      expect(got.status, kind).toBe(200);
      const g = got.body.idp;
      expect(g.type, kind).toBe(typeNames[k.type]);
      expect(g.idp.idp).toMatchObject({ name: `${kind} provider`, options: { isLinkingAllowed: true } });
      const secret = secretValue(k);
      if (k.secret) expect(g.idp.config[`has${k.secret[0]!.toUpperCase()}${k.secret.slice(1)}`], kind).toBe(true);
      if (secret) expect(JSON.stringify(got.body), kind).not.toContain(secret);
      if (kind === "ldap") expect(g.callbackUrl).toBe("");
      else if (kind === "saml") {
        expect(g.callbackUrl).toBe(`${t.url}/idps/${id}/saml/acs`);
        expect(g.serviceProviderMetadataUrl).toBe(`${t.url}/idps/${id}/saml/metadata`);
      } else expect(g.callbackUrl, kind).toBe(`${t.url}/idps/callback`);
      const row = await t.server.db.prisma.idp.findUniqueOrThrow({ where: { id } });
      if (secret) expect(row.secret, kind).toMatch(/^v1\./);
      else expect(row.secret, kind).toBeNull();
      const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: id } });
      if (secret) expect(JSON.stringify(events.map((e) => e.payload)), kind).not.toContain(secret);
    }
    // the configuration comes back as given (without the secret), e.g. LDAP's and Azure AD's nested fields
    const ldap = (await api("GET", `/idps/ldap/${ids.ldap}`)).body.idp.idp.config;
    expect(ldap).toMatchObject({
      servers: ["ldaps://ldap.example.com:636", "ldap://ldap2.example.com"],
      baseDn: "dc=example,dc=com",
      userFilters: ["uid", "mail"],
      timeout: "10s",
      attributes: { idAttribute: "uid", emailAttribute: "mail", firstNameAttribute: "givenName" },
    });
    expect((await api("GET", `/idps/azure_ad/${ids.azure_ad}`)).body.idp.idp.config.tenant).toEqual({ tenantId: "contoso.onmicrosoft.com" });

    const search = await api("POST", `/idps/_search?ctx.org_id=${orgId}`, []);
    expect(search.status).toBe(200);
    const types = Object.fromEntries(search.body.result.map((r: { idp: { name: string }; type: string }) => [r.idp.name, r.type]));
    for (const [kind, k] of Object.entries(kinds())) expect(types[`${kind} provider`], kind).toBe(typeNames[k.type]);
  });

  it("is patched field by field: lists replaced, message fields whole, the secret kept unless given", async () => {
    const before = await t.server.db.prisma.idp.findUniqueOrThrow({ where: { id: ids.ldap! } });
    const patched = await api("PATCH", `/idps/ldap/${ids.ldap}`, {
      config: { user_filters: ["mail"], timeout: "5s", attributes: { id_attribute: "entryUUID" } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const config = (await api("GET", `/idps/ldap/${ids.ldap}`)).body.idp.idp.config;
    expect(config).toMatchObject({
      userFilters: ["mail"],
      timeout: "5s",
      attributes: { idAttribute: "entryUUID" },
      servers: ["ldaps://ldap.example.com:636", "ldap://ldap2.example.com"],
      hasBindPassword: true,
    });
    expect(config.attributes.emailAttribute).toBe("");
    const after = await t.server.db.prisma.idp.findUniqueOrThrow({ where: { id: ids.ldap! } });
    expect(after.secret).toBe(before.secret);
    // an emptied list needs replace_<list>
    await api("PATCH", `/idps/ldap/${ids.ldap}`, { config: { replace_user_object_classes: true } });
    expect((await api("GET", `/idps/ldap/${ids.ldap}`)).body.idp.idp.config.userObjectClasses).toEqual([]);
    // a new secret replaces the stored one; the same configuration twice writes nothing
    await api("PATCH", `/idps/oidc/${ids.oidc}`, { config: { client_secret: "rotated" } });
    expect((await t.server.db.prisma.idp.findUniqueOrThrow({ where: { id: ids.oidc! } })).secret).not.toBe(before.secret);
    const seq = (await api("GET", `/idps/oidc/${ids.oidc}`)).body.idp.details.sequence;
    await api("PATCH", `/idps/oidc/${ids.oidc}`, { config: { issuer: "https://op.example.com", scopes: ["openid", "email"] } });
    expect((await api("GET", `/idps/oidc/${ids.oidc}`)).body.idp.details.sequence).toBe(seq);
    // SAML: both metadata forms at once are refused; switching to a metadata URL clears the XML, and back
    const both = await api("PATCH", `/idps/saml/${ids.saml}`, { config: { metadata_url: "https://idp.example.com/metadata", metadata_xml: "" } });
    expect(both.status, JSON.stringify(both.body)).toBe(400);
    const xml = (await api("GET", `/idps/saml/${ids.saml}`)).body.idp.idp.config.metadataXml as string;
    const toUrl = await api("PATCH", `/idps/saml/${ids.saml}`, { config: { metadata_url: "https://idp.example.com/metadata" } });
    expect(toUrl.status, JSON.stringify(toUrl.body)).toBe(200);
    expect((await api("GET", `/idps/saml/${ids.saml}`)).body.idp.idp.config).toMatchObject({
      metadataUrl: "https://idp.example.com/metadata",
      metadataXml: "",
    });
    expect((await api("PATCH", `/idps/saml/${ids.saml}`, { config: { metadata_xml: xml } })).status).toBe(200);
    expect((await api("GET", `/idps/saml/${ids.saml}`)).body.idp.idp.config).toMatchObject({ metadataUrl: "", metadataXml: xml });
  });

  it("is reached only through its own kind's RPCs; Get and Patch work over Connect for every kind", async () => {
    expect((await api("GET", `/idps/oidc/${ids.gitlab}`)).status).toBe(404);
    expect((await api("PATCH", `/idps/google/${ids.github}`, { idp: { name: "x" } })).status).toBe(404);
    const client = connectClient(IdentityProviderService, t.url, t.adminPat);
    for (const [kind, { name }] of Object.entries(kindMessages)) {
      const c = client as unknown as Record<
        string,
        (req: object) => Promise<{ idp?: { type: number; idp?: { idp?: { name: string } } }; details?: { id: string } }>
      >;
      const got = await c[`get${name}IDP`]!({ id: ids[kind] });
      expect(got.idp?.idp?.idp?.name, kind).toBe(`${kind} provider`);
      await c[`patch${name}IDP`]!({ id: ids[kind], idp: { idp: { name: `${kind} renamed` } } });
      expect((await c[`get${name}IDP`]!({ id: ids[kind] })).idp?.idp?.idp?.name, kind).toBe(`${kind} renamed`);
    }
    await expectCode(client.getOIDCIDP({ id: ids.saml }), Code.NotFound);
  });

  it("refuses a configuration that does not hold, naming the field", async () => {
    const bad: [string, Record<string, unknown>, RegExp][] = [
      ["oidc", { issuer: "not a url", client_id: "c" }, /idp\.config\.issuer/],
      ["oidc", { client_id: "c" }, /idp\.config\.issuer/],
      ["ldap", { ...kinds().ldap!.config, servers: ["http://ldap.example.com"] }, /idp\.config\.servers/],
      ["ldap", { ...kinds().ldap!.config, servers: [] }, /idp\.config\.servers: at least one/],
      ["ldap", { ...kinds().ldap!.config, timeout: "-5s" }, /idp\.config\.timeout/],
      ["oauth", { ...kinds().oauth!.config, token_endpoint: "" }, /idp\.config\.token_endpoint/],
      ["azure_ad", { client_id: "a", tenant: { tenant_type: "AZURE_AD_TENANT_TYPE_NOPE" } }, /tenant/],
      ["apple", { ...kinds().apple!.config, private_key: "not a key" }, /idp\.config\.private_key/],
      ["saml", { binding: "SAML_BINDING_POST" }, /idp\.config\.metadata_xml: give exactly one/],
      ["saml", { metadata_xml: "<md:EntityDescriptor", binding: "SAML_BINDING_POST" }, /idp\.config\.metadata_xml: not well-formed XML/],
      ["saml", { metadata_xml: metadata("bm90IGEgY2VydGlmaWNhdGU=") }, /idp\.config\.metadata_xml: a signing certificate is not a valid X\.509/],
      ["saml", { metadata_xml: metadata(signingCert).replace(/<md:KeyDescriptor[\s\S]*<\/md:KeyDescriptor>/, "") }, /no signing certificate/],
      ["saml", { metadata_xml: metadata(signingCert), metadata_url: "https://idp.example.com/md" }, /give exactly one/],
    ];
    for (const [kind, config, field] of bad) {
      const r = await api("POST", `/idps/${kind}`, { idp: { name: "bad" }, config });
      expect(r.status, `${kind} ${JSON.stringify(config).slice(0, 80)}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.message, kind).toMatch(field);
    }
    // a patch is checked on its result: LDAP cannot be left without servers
    const r = await api("PATCH", `/idps/ldap/${ids.ldap}`, { config: { replace_servers: true } });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/idp\.config\.servers: at least one/);
  });

  it("travels in an export and an import, every kind without its secret", async () => {
    const exported = await rest(t.url, "POST", "/admin/v1/export", { token: t.adminPat, body: { org_ids: [orgId], response_output: true } });
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    const [org] = exported.body.orgs;
    const text = JSON.stringify(org);
    for (const k of Object.values(kinds())) {
      const secret = secretValue(k);
      if (secret) expect(text).not.toContain(secret);
    }
    expect(text).not.toContain("rotated");
    const lists = [
      "oidcIdps",
      "jwtIdps",
      "ldapIdps",
      "oauthIdps",
      "azureAdIdps",
      "githubIdps",
      "githubEnterpriseIdps",
      "gitlabIdps",
      "gitlabSelfHostedIdps",
      "googleIdps",
      "appleIdps",
      "samlIdps",
    ];
    for (const l of lists) expect(org[l], l).toHaveLength(1);
    expect(org.ldapIdps[0].idp).toMatchObject({ name: "ldap renamed", baseDn: "dc=example,dc=com", userFilters: ["mail"], ownerPolicy: "activate" });

    // gone, then imported again: the same IDs and configurations, no secrets
    const views = Object.fromEntries(
      await Promise.all(Object.entries(ids).map(async ([kind, id]) => [kind, (await api("GET", `/idps/${kind}/${id}`)).body.idp.idp])),
    );
    for (const id of Object.values(ids)) expect((await api("DELETE", `/idps/${id}`)).status).toBe(200);
    const imported = await rest(t.url, "POST", "/admin/v1/import", { token: t.adminPat, body: { data_orgs: { orgs: [org] } } });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body.errors).toEqual([]);
    for (const [kind, id] of Object.entries(ids)) {
      const again = (await api("GET", `/idps/${kind}/${id}`)).body.idp.idp;
      const k = kinds()[kind]!;
      const hasSecret = k.secret ? `has${k.secret[0]!.toUpperCase()}${k.secret.slice(1)}` : undefined;
      expect(again.idp, kind).toEqual(views[kind].idp);
      expect({ ...again.config, ...(hasSecret ? { [hasSecret]: true } : {}) }, kind).toEqual(views[kind].config);
      if (hasSecret) expect(again.config[hasSecret], kind).toBe(false);
    }
    // an imported configuration is checked as a create's, naming the entry
    const broken = structuredClone(org);
    broken.ldapIdps[0].idpId = "broken-ldap";
    broken.ldapIdps[0].idp.servers = ["http://nope"];
    const r = await rest(t.url, "POST", "/admin/v1/import", { token: t.adminPat, body: { data_orgs: { orgs: [broken] } } });
    expect(r.body.errors).toEqual([
      expect.objectContaining({ type: "ldap_idp", id: "broken-ldap", message: expect.stringMatching(/ldap_idps\[0\]\.idp\.servers/) }),
    ]);
  });
});
