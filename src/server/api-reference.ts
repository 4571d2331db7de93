// GET /docs: the API reference, Redoc's standalone bundle (the `redoc` package, served from node_modules by this
// server, never from a CDN) rendering /openapi.json, with request and response bodies, their examples and the
// descriptions as Markdown. Without JavaScript the page shows the plain table of renderApiReference.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { FastifyInstance } from "fastify";
import { type buildOpenApi, renderApiReference } from "./openapi.js";

const BUNDLE = "/docs/redoc.standalone.js";

/**
 * Everything from this server: scripts, the spec (connect-src) and the search index's worker (a blob: URL). Redoc's
 * styled components write <style> elements, hence 'unsafe-inline' for styles only; images from here and data: URLs.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src blob:",
  "connect-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The menu's footer shows a logo from the vendor's CDN: an empty image instead, so that the page fetches nothing elsewhere. */
const VENDOR_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";

/** Redoc's standalone bundle as this server serves it: without the one URL of another origin it holds. */
export function redocBundle(): string {
  const path = createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js");
  return readFileSync(path, "utf8")
    .replaceAll(VENDOR_LOGO, EMPTY_IMAGE)
    .replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n");
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page: Redoc's element (it starts itself on `spec-url`), the plain table inside <noscript>. */
export function referencePage(doc: ReturnType<typeof buildOpenApi>): string {
  const fallback = renderApiReference(doc)
    .replace(/^[\s\S]*<body>/, "")
    .replace(/<\/body><\/html>$/, "");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} API reference</title>
<link rel="icon" href="data:,">
<style>body{margin:0;padding:0}</style>
</head>
<body>
<redoc spec-url="/openapi.json" expand-responses="200,201" json-sample-expand-level="4" required-props-first="true" sort-tags-alphabetically="false"></redoc>
<noscript>${fallback}</noscript>
<script src="${BUNDLE}"></script>
</body>
</html>
`;
}

/** Serves /docs and the bundle it loads (read once, kept for a day by browsers: it changes only with the package). */
export function registerApiReference(app: FastifyInstance, doc: ReturnType<typeof buildOpenApi>): void {
  const page = referencePage(doc);
  let bundle: string | undefined;
  app.get("/docs", async (_req, reply) => reply.type("text/html; charset=utf-8").header("content-security-policy", CSP).send(page));
  app.get(BUNDLE, async (_req, reply) => {
    bundle ??= redocBundle();
    return reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=86400").send(bundle);
  });
}
