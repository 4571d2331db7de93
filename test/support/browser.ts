import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { projectRoot } from "../../src/storage/paths.js";

/** Debian's Chromium (or CHROMIUM_PATH); Playwright cannot download its own browser here. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!existsSync(path)) throw new Error(`no Chromium at ${path}: run 'bash scripts/ensure-test-deps.sh' or set CHROMIUM_PATH`);
  return path;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Quiet on a machine with no network: no background fetches, no updates, no sync.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Serves a page and the bundled script of `entry` (relative to the project) on its own loopback port: another origin. */
export async function servePage(entry: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const bundle = await build({ entryPoints: [join(projectRoot, entry)], bundle: true, format: "iife", platform: "browser", write: false, target: "es2022" });
  const js = bundle.outputFiles[0]!.text;
  const server = http.createServer((req, res) => {
    if (req.url === "/app.js") res.writeHead(200, { "content-type": "text/javascript" }).end(js);
    else res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><html><head><script src="/app.js"></script></head><body>app</body></html>');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/**
 * After a provider's callback: the page the callback moves the browser on to by itself (its continue page refreshes
 * to /ui/login/idp/continue at once), loaded; a callback page that refused stays where it is.
 */
export async function afterCallback(page: import("playwright-core").Page): Promise<void> {
  await page.waitForLoadState();
  if (!new URL(page.url()).pathname.startsWith("/idps/callback")) return;
  if (!(await page.locator('meta[http-equiv="refresh"]').count())) return;
  await page.waitForURL((u) => !u.pathname.startsWith("/idps/callback"), { timeout: 20_000 });
  await page.waitForLoadState();
}
