import { randomBytes } from "node:crypto";
import type { SigningCertificate } from "../crypto/signing-certificate.js";
import type { ExternalUser, Fetch, RedirectStart, StoredProvider } from "./provider.js";
import { SamlFederation, type ServiceProvider, samlSettingsOf } from "./saml.js";

/** Where a provider's service provider lives on this server: its metadata (its entity ID) and its ACS. */
export const samlPaths = (idpId: string) => ({ metadata: `/idps/${idpId}/saml/metadata`, acs: `/idps/${idpId}/saml/acs` });

/** How long an IdP's metadata read from `metadata_url` is reused. */
const METADATA_TTL_MS = 10 * 60_000;

/**
 * SAML as a redirect sign-in (src/federation/redirect.ts): the browser goes to the IdP with an AuthnRequest (a
 * redirect, or a form to post), and its response comes back posted to the ACS, which keeps it with the round
 * trip and sends the browser on to the one callback. The relay state is the round trip's `state`, the request's
 * ID its `nonce`. The service provider's key pair is the provider's secret, made at first use (`keysOf`).
 */
export class SamlRoundTrip {
  private readonly saml = new SamlFederation();
  private readonly metadata = new Map<string, { at: number; xml: Promise<string> }>();

  constructor(
    private readonly fetch: Fetch,
    private readonly keysOf: (p: StoredProvider) => Promise<SigningCertificate>,
  ) {}

  private async settingsOf(p: StoredProvider) {
    const url = typeof p.config.metadataUrl === "string" ? p.config.metadataUrl : "";
    return samlSettingsOf(p, url ? await this.fetchedMetadata(p.key, url) : undefined);
  }

  /** The IdP's metadata at `url`, read once per provider version and reused for a while; a failed read is not kept. */
  private fetchedMetadata(key: string, url: string): Promise<string> {
    const cached = this.metadata.get(key);
    if (cached && Date.now() - cached.at < METADATA_TTL_MS) return cached.xml;
    const xml = this.fetch(url, { method: "GET", headers: { accept: "application/samlmetadata+xml, application/xml" } }).then(async (r) => {
      if (!r.ok) throw new Error(`the IdP's metadata_url answered ${r.status}`);
      return r.text();
    });
    xml.catch(() => this.metadata.delete(key));
    if (this.metadata.size > 1000) this.metadata.clear();
    this.metadata.set(key, { at: Date.now(), xml });
    return xml;
  }

  /** The service provider of `p` at `origin` (this server as the browser reaches it). */
  private async serviceProvider(p: StoredProvider, origin: string): Promise<ServiceProvider> {
    const keys = await this.keysOf(p);
    const paths = samlPaths(p.id);
    return { entityId: `${origin}${paths.metadata}`, acsUrl: `${origin}${paths.acs}`, ...keys };
  }

  async start(p: StoredProvider, callbackUri: string): Promise<RedirectStart> {
    const settings = await this.settingsOf(p);
    // 43 characters of base64url: within the 80 bytes SAML allows a relay state.
    const state = randomBytes(32).toString("base64url");
    const started = await this.saml.start(settings, await this.serviceProvider(p, new URL(callbackUri).origin), state);
    const common = { state, nonce: started.requestId, codeVerifier: "" };
    return started.kind === "redirect" ? { ...common, url: started.url } : { ...common, url: "", form: { action: started.action, fields: started.fields } };
  }

  /** The user of the response posted to the ACS (kept with the round trip), checked against the request it answers. */
  async finish(p: StoredProvider, callbackUrl: URL, intent: { nonce: string; posted?: string | undefined }): Promise<ExternalUser> {
    if (!intent.posted) throw new Error("no SAML response was posted to the assertion consumer service");
    const settings = await this.settingsOf(p);
    const { user } = await this.saml.finish(settings, await this.serviceProvider(p, callbackUrl.origin), intent.posted, intent.nonce);
    return user;
  }

  /** The service provider's metadata, for the IdP's administrator to import. */
  async metadataOf(p: StoredProvider, origin: string): Promise<string> {
    return this.saml.metadata(await this.settingsOf(p), await this.serviceProvider(p, origin));
  }
}
