// The admin console (docs/contract.md "Admin console"): the single-page app that `npm run build` makes from console/
// into dist/console (scripts/build.mjs), served here with a strict CSP, and the environment it needs to sign in.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { gzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply } from "fastify";
import { CONSOLE_PATH } from "../domain/console.js";
import { scopeOf } from "../oidc/context.js";
import { consoleClientId } from "../query/console-app.js";
import type { TenancyQueries } from "../query/tenancy.js";
import type { Database } from "../storage/database.js";
import { projectRoot } from "../storage/paths.js";

/** Where `npm run build` puts the console. */
export const consoleDist = join(projectRoot, "dist", "console");

/**
 * Scripts, styles and fonts of this server only, no inline script or style element (the build writes none); the API
 * on the same origin (connect-src); images from here and data: URLs (the branding's logos come as either); never
 * framed. Sign-in and sign-out leave by navigation, which form-action does not govern.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

interface Asset {
  type: string;
  body: Buffer;
  /** Set when compressing saves something. */
  gzip?: Buffer;
}

/** The built files under assets/ (names with a content hash), read once: they change only with a new build. */
function readAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const at = join(dir, "assets");
  if (!existsSync(at)) return assets;
  for (const name of readdirSync(at)) {
    const body = readFileSync(join(at, name));
    const gzip = gzipSync(body, { level: 9 });
    assets.set(name, { type: TYPES[extname(name)] ?? "application/octet-stream", body, ...(gzip.length < body.length ? { gzip } : {}) });
  }
  return assets;
}

function notBuilt(reply: FastifyReply) {
  return reply
    .status(404)
    .headers(PAGE_HEADERS)
    .type("text/plain; charset=utf-8")
    .send("The admin console is not built: run `npm run build` (npm start builds it when its sources change).\n");
}

export function registerConsole(app: FastifyInstance, deps: { db: Database; tenancy: TenancyQueries; secure: boolean; dir?: string }): void {
  const dir = deps.dir ?? consoleDist;
  const indexPath = join(dir, "index.html");
  const index = existsSync(indexPath) ? readFileSync(indexPath, "utf8") : undefined;
  const assets = readAssets(dir);

  const page = (_req: unknown, reply: FastifyReply) => {
    if (!index) return notBuilt(reply);
    // never cached: it names the current build's hashed files
    return reply.headers(PAGE_HEADERS).header("cache-control", "no-cache").type("text/html; charset=utf-8").send(index);
  };

  app.get(CONSOLE_PATH.slice(0, -1), (_req, reply) => reply.redirect(CONSOLE_PATH, 302));
  // What the app needs to sign in at the instance the browser reached: its issuer and the console's client ID.
  app.get(`${CONSOLE_PATH}environment.json`, async (req, reply) => {
    reply.header("cache-control", "no-store");
    const scope = await scopeOf(deps, req);
    if (!scope) return reply.status(404).send({ error: "no instance serves this domain" });
    const clientId = await consoleClientId(deps.db, scope.instance.id);
    return { issuer: scope.issuer, clientId: clientId ?? null };
  });
  app.get<{ Params: { file: string } }>(`${CONSOLE_PATH}assets/:file`, (req, reply) => {
    const asset = assets.get(req.params.file);
    // a missing file is a 404, never the page: a stale chunk must fail as itself
    if (!asset) return reply.status(404).type("text/plain; charset=utf-8").send("not found\n");
    reply.header("cache-control", "public, max-age=31536000, immutable").header("x-content-type-options", "nosniff").header("vary", "accept-encoding");
    reply.type(asset.type);
    if (asset.gzip && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) return reply.header("content-encoding", "gzip").send(asset.gzip);
    return reply.send(asset.body);
  });
  // Every other path under the console is one of its pages (a deep link, a reload): the app routes it.
  app.get(CONSOLE_PATH, page);
  app.get(`${CONSOLE_PATH}*`, page);
}
