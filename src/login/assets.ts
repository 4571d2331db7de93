import { hostnameOf } from "../authz/interceptor.js";
import { defaultsOf } from "../domain/settings-kinds.js";
import { brandingAsset } from "../query/branding-assets.js";
import { brandingStylesheet } from "../web/branding.js";
import * as pages from "../web/pages.js";
import { type Fields, LOGIN_PATH, type LoginKit } from "./kit.js";

/** What every page loads: the stylesheet, the instance's branding (stylesheet and files). */
export function registerAssets(kit: LoginKit): void {
  const { ui, deps } = kit;
  const { db, tenancy } = deps;

  ui.get(`${LOGIN_PATH}/style.css`, async (_req, reply) =>
    reply.type("text/css; charset=utf-8").header("cache-control", "public, max-age=3600").send(pages.stylesheet),
  );
  // Branding files of the Host's instance, by content: never change, so cached for a year.
  ui.get(`${LOGIN_PATH}/assets/:sha256`, async (req, reply) => {
    const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
    const { sha256 } = req.params as { sha256: string };
    const asset = instance && /^[0-9a-f]{64}$/.test(sha256) ? await brandingAsset(db, instance.id, sha256) : null;
    if (!asset) return reply.status(404).type("text/plain; charset=utf-8").send("not found");
    return reply.type(asset.contentType).header("cache-control", "public, max-age=31536000, immutable").send(Buffer.from(asset.data));
  });
  // The instance's branding: revalidated on every page (no-cache), so that an activation shows at once.
  ui.get(`${LOGIN_PATH}/branding.css`, async (req, reply) => {
    const instance = await tenancy.instanceByDomain(hostnameOf(req.client.host));
    // ?org=: the page was for an organisation's users (only an organisation of this instance counts).
    const orgParam = (req.query as Fields).org;
    const org = instance && orgParam ? await tenancy.orgById(instance.id, orgParam.slice(0, 200)) : null;
    const branding = instance ? await kit.brandingOf(instance.id, org?.id) : defaultsOf("branding");
    return reply.type("text/css; charset=utf-8").header("cache-control", "no-cache").send(brandingStylesheet(branding));
  });
}
