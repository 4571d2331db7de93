import { holdPostedAnswer } from "../command/idp-intents.js";
import { samlPaths } from "../federation/saml-round-trip.js";
import type { RedirectProtocols } from "../federation/redirect.js";
import { storedProviderOf } from "../federation/stored.js";
import { IdpQueries } from "../query/idps.js";
import * as pages from "../web/pages.js";
import { IDP_CALLBACK_PATH } from "./idp.js";
import type { LoginKit } from "./kit.js";

/** A SAML response is larger than a form of ours: signed XML with certificates and attributes. */
const ACS_BODY_LIMIT = 1024 * 1024;

/**
 * A SAML provider's service provider: its metadata (what the IdP's administrator imports), and its assertion
 * consumer service. The response arrives by a cross-site POST, which carries none of the browser's SameSite
 * cookies: the ACS keeps it with the waiting round trip (matched by its RelayState, once) and sends the browser
 * on to the one callback, where the binding cookie arrives with a top-level GET and the response is checked.
 */
export function registerSamlServiceProvider(kit: LoginKit, protocols: RedirectProtocols): void {
  const { es, db, box } = kit.deps;
  const idps = new IdpQueries(db);

  /** The SAML provider of the path's ID, of the request's instance or the system; the page for none. */
  async function providerOf(req: Parameters<LoginKit["contextOf"]>[0], reply: Parameters<LoginKit["contextOf"]>[1]) {
    const c = await kit.contextOf(req, reply);
    // Neither page sets a CSRF cookie: the ACS is posted to cross-site, and the metadata is read by machines.
    c.setCookies.length = 0;
    const id = (req.params as { id?: string }).id ?? "";
    // An ID as this server makes them, before any lookup (a NUL in a path is no query's to refuse).
    const row = c.instance && /^[A-Za-z0-9_-]{1,64}$/.test(id) ? await idps.byId(id) : null;
    const stored = row && (row.instanceId === "" || row.instanceId === c.instance?.id) ? storedProviderOf(row, box) : undefined;
    return { c, stored: stored?.kind === "saml" ? stored : undefined };
  }

  kit.ui.get(samlPaths(":id").metadata, async (req, reply) => {
    const { c, stored } = await providerOf(req, reply);
    if (!stored) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.notFound), 404);
    try {
      const xml = await protocols.saml.metadataOf(stored, c.origin);
      return reply.type("application/samlmetadata+xml; charset=utf-8").header("cache-control", "no-store").send(xml);
    } catch (e) {
      // Its IdP's metadata (metadata_url) could not be read: the page says so, the log says why.
      kit.ui.log.warn({ idp: stored.id, reason: (e as Error).message }, "saml: the service provider's metadata could not be made");
      return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalFailed), 400);
    }
  });

  kit.ui.post(samlPaths(":id").acs, { bodyLimit: ACS_BODY_LIMIT }, async (req, reply) => {
    const { c, stored } = await providerOf(req, reply);
    const body = (req.body ?? {}) as Record<string, string>;
    const relayState = typeof body.RelayState === "string" ? body.RelayState : "";
    const response = typeof body.SAMLResponse === "string" ? body.SAMLResponse : "";
    const held =
      !!stored &&
      !!c.instance &&
      !!relayState &&
      !!response &&
      (await holdPostedAnswer(es, box, { instanceId: c.instance.id, idpId: stored.id, state: relayState, answer: response }));
    // No round trip waits for it (an IdP-initiated response, a replay, another provider's): nothing comes of it.
    if (!held) return c.send(pages.messagePage(c.page, c.page.t.title, c.page.t.externalFailed), 400);
    return reply.redirect(`${IDP_CALLBACK_PATH}?${new URLSearchParams({ state: relayState })}`, 303);
  });
}
