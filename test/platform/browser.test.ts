import { Code } from "@connectrpc/connect";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, servePage } from "../support/browser.js";
import { startTestServer, type TestServer } from "../support/server.js";

let browser: Browser;
let page: Awaited<ReturnType<typeof servePage>>;

beforeAll(async () => {
  browser = await launchChromium();
  page = await servePage("test/browser/page-client.ts");
});
afterAll(async () => {
  await browser?.close();
  await page?.close();
});

/** Opens the app page (its own origin) and has it call the server with gRPC-web. */
async function callFromBrowser(t: TestServer, token: string, key: string) {
  const tab = await browser.newPage();
  try {
    await tab.goto(page.origin);
    // "localhost" is another origin than the page's 127.0.0.1:<port>, and one of the instance's domains.
    const serverUrl = `http://localhost:${t.port}`;
    return await tab.evaluate(([url, tok, k]) => (globalThis as any).resolveAndSet(url, tok, k), [serverUrl, token, key] as const);
  } finally {
    await tab.close();
  }
}

describe("a browser app on another origin", () => {
  it("calls the server with gRPC-web through CORS", async () => {
    const t = await startTestServer({ SVC_CORS_ORIGINS: page.origin });
    try {
      expect(await callFromBrowser(t, t.adminPat, "es")).toEqual({ ok: true, defaultLanguage: "es" });
      // errors arrive as gRPC status through the exposed headers
      expect(await callFromBrowser(t, t.adminPat, "ES")).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect(await callFromBrowser(t, "pat_wrong", "es")).toMatchObject({ ok: false, code: Code.Unauthenticated });
    } finally {
      await t.close();
    }
  });

  it("is refused when its origin is not allowed", async () => {
    const t = await startTestServer({ SVC_CORS_ORIGINS: "http://somewhere-else.example" });
    try {
      const r = await callFromBrowser(t, t.adminPat, "es");
      expect(r.ok).toBe(false);
      // the browser blocks the response: nothing was changed either, since the preflight failed
      const lang = await t.server.db.prisma.setting.findFirst({ where: { kind: "language" } });
      expect(lang).toBeNull();
    } finally {
      await t.close();
    }
  });
});
