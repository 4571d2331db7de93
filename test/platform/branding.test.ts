import { inflateSync } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ActivateBrandingRequestSchema,
  BrandingSettingsService,
  ResolveBrandingRequestSchema,
  SetBrandingRequestSchema,
  UploadBrandingAssetRequestSchema,
} from "../../gen/svc/settings/branding/v3alpha/branding_service_pb.js";
import { launchChromium } from "../support/browser.js";
import { call, rest } from "../support/clients.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import type { TestServer } from "../support/server.js";
import type { MailServer } from "../support/smtp.js";

// Branding: the API sets a preview, activation makes it what the login UI and the mails show.
let t: TestServer;
let mail: MailServer;
let close: () => Promise<void>;
let browser: Browser;
beforeAll(async () => {
  ({ t, mail, close } = await startMessagingServer());
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await close?.();
});

const branding = (method: string, query = "", body?: unknown) =>
  rest(t.url, method, `/settings/v3alpha/branding${query}`, { token: t.adminPat, ...(body ? { body } : {}) });
const activate = (query = "") => rest(t.url, "POST", `/settings/v3alpha/branding/_activate${query}`, { token: t.adminPat, body: {} });

/** The colour (#rrggbb) of one pixel of the page as Chromium draws it: a 1x1 screenshot, decoded. */
async function pixel(path: string, at: { x: number; y: number }, colorScheme: "light" | "dark" = "light"): Promise<string> {
  const ctx = await browser.newContext({ colorScheme, deviceScaleFactor: 1, viewport: { width: 800, height: 600 } });
  try {
    const page = await ctx.newPage();
    await page.goto(`${t.url}${path}`);
    return hexOfPng(await page.screenshot({ clip: { ...at, width: 1, height: 1 } }));
  } finally {
    await ctx.close();
  }
}

/** A 1x1 PNG's pixel: its IDAT inflated is one filter byte then the pixel (every filter leaves a lone first pixel as it is). */
function hexOfPng(png: Buffer): string {
  const chunks: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString("latin1", at + 4, at + 8) === "IDAT") chunks.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(chunks));
  return `#${[...raw.subarray(1, 4)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const PAGE = "/ui/login/password/reset";
const BACKGROUND = { x: 5, y: 5 };

describe("branding settings", () => {
  it("write the preview; the login UI changes colours only once it is activated", async () => {
    const before = await pixel(PAGE, BACKGROUND);
    expect(before).toBe("#f5f6f8");
    const set = await branding("PATCH", "", {
      primaryColor: { set: "#d01010" },
      backgroundColor: { set: "#10a010" },
      themeMode: { set: "light" },
      customValues: { set: { value: ["radius=8px"] } },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await branding("GET", "?preview=true")).body.settings.backgroundColor.value).toBe("#10a010");
    expect((await branding("GET")).body.settings.backgroundColor).toMatchObject({ value: "#f5f6f8", owner: { type: "OWNER_TYPE_SYSTEM" } });
    expect(await pixel(PAGE, BACKGROUND)).toBe("#f5f6f8");

    expect((await activate()).status).toBe(200);
    const active = (await branding("GET")).body.settings;
    expect(active.backgroundColor).toEqual({ value: "#10a010" });
    expect(active.customValues.value).toEqual(["radius=8px"]);
    expect(await pixel(PAGE, BACKGROUND)).toBe("#10a010");
    const css = await (await fetch(`${t.url}/ui/login/branding.css`)).text();
    expect(css).toContain("--svc-custom-radius:8px");
    // The button takes the primary colour.
    const ctx = await browser.newContext({ deviceScaleFactor: 1 });
    const page = await ctx.newPage();
    await page.goto(`${t.url}${PAGE}`);
    const box = (await page.locator("button").first().boundingBox())!;
    expect(hexOfPng(await page.screenshot({ clip: { x: Math.round(box.x + 4), y: Math.round(box.y + 4), width: 1, height: 1 } }))).toBe("#d01010");
    await ctx.close();
  });

  it("follow the browser's colour scheme in auto mode, and hide the product line when asked", async () => {
    await branding("PATCH", "", { themeMode: { set: "auto" }, backgroundColorDark: { set: "#000080" }, hideProductBranding: { set: false } });
    await activate();
    expect(await pixel(PAGE, BACKGROUND, "dark")).toBe("#000080");
    expect(await pixel(PAGE, BACKGROUND, "light")).toBe("#10a010");
    expect(await (await fetch(`${t.url}${PAGE}`)).text()).toContain('class="product"');

    await branding("PATCH", "", { hideProductBranding: { set: true } });
    await activate();
    expect(await (await fetch(`${t.url}${PAGE}`)).text()).not.toContain('class="product"');
  });

  it("reset in the preview and activated: the context inherits again", async () => {
    await branding("PATCH", "", { backgroundColor: { reset: true }, backgroundColorDark: { reset: true }, themeMode: { reset: true } });
    await activate();
    expect((await branding("GET")).body.settings.backgroundColor).toMatchObject({ value: "#f5f6f8", owner: { type: "OWNER_TYPE_SYSTEM" } });
    expect(await pixel(PAGE, BACKGROUND)).toBe("#f5f6f8");
  });

  it("refuse colours, modes and custom values that are not of their form, naming the field, and store nothing", async () => {
    const refused = async (body: unknown, field: string) => {
      const r = await branding("PATCH", "", body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.message).toContain(field);
    };
    await refused({ primaryColor: { set: "red" } }, "settings.primary_color.set");
    await refused({ primaryColor: { set: "#FF0000" } }, "settings.primary_color.set");
    await refused({ themeMode: { set: "sepia" } }, "settings.theme_mode.set");
    await refused({ customValues: { set: { value: ["ok=1px", "x=1px;}body{display:none"] } } }, "settings.custom_values.set.value[1]");
    expect((await branding("GET", "?preview=true")).body.settings.primaryColor.value).toBe("#d01010");
  });

  it("per organisation over gRPC, and the organisation's users get mails with its link colour", async () => {
    const ctx = { owner: { case: "orgId" as const, value: t.defaultOrgId } };
    const opts = { token: t.adminPat };
    await call(
      "grpc",
      t.url,
      BrandingSettingsService,
      BrandingSettingsService.method.setBranding,
      create(SetBrandingRequestSchema, { ctx, settings: { primaryColor: { value: { case: "set", value: "#0a7f5a" } } } }),
      opts,
    );
    await call("grpc", t.url, BrandingSettingsService, BrandingSettingsService.method.activateBranding, create(ActivateBrandingRequestSchema, { ctx }), opts);
    const org = await call(
      "grpc",
      t.url,
      BrandingSettingsService,
      BrandingSettingsService.method.resolveBranding,
      create(ResolveBrandingRequestSchema, { ctx }),
      opts,
    );
    expect(org.settings?.primaryColor?.value).toBe("#0a7f5a");
    expect(org.settings?.primaryColor?.owner).toBeUndefined();

    const created = await rest(t.url, "POST", "/resources/v3alpha/users", {
      token: t.adminPat,
      body: {
        username: "branded",
        human: { profile: { givenName: "B", familyName: "T" }, email: { address: "branded@example.com" }, password: { password: "Secr3t!pass" } },
      },
    });
    expect(created.status).toBe(201);
    const [m] = await mailsTo(mail, "branded@example.com");
    expect(m!.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=")).toContain('style="color:#0a7f5a"');
  });

  it("serve an uploaded logo and font once activated; refuse files of another kind, naming the field", async () => {
    // A 1x1 PNG.
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    const up = await rest(t.url, "POST", "/settings/v3alpha/branding/assets/logo", { token: t.adminPat, body: { data: png } });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body).toMatchObject({ contentType: "image/png", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const sha = up.body.sha256 as string;
    expect((await branding("GET", "?preview=true")).body.settings.logo.value).toBe(sha);
    expect(await (await fetch(`${t.url}${PAGE}`)).text()).not.toContain(sha);
    expect((await activate()).status).toBe(200);
    const html = await (await fetch(`${t.url}${PAGE}`)).text();
    expect(html).toContain(`<img class="logo" src="/ui/login/assets/${sha}"`);
    const served = await fetch(`${t.url}/ui/login/assets/${sha}`);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("cache-control")).toContain("immutable");
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(png, "base64"))).toBe(true);
    expect((await fetch(`${t.url}/ui/login/assets/${"0".repeat(64)}`)).status).toBe(404);
    // The browser loads it under the page's Content-Security-Policy.
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${t.url}${PAGE}`);
    expect(await page.locator("img.logo").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    await ctx.close();

    // A font through gRPC: its bytes say what it is.
    const woff2 = new Uint8Array([0x77, 0x4f, 0x46, 0x32, ...new Array(60).fill(0)]);
    const font = await call(
      "grpc",
      t.url,
      BrandingSettingsService,
      BrandingSettingsService.method.uploadBrandingAsset,
      create(UploadBrandingAssetRequestSchema, { kind: "font", data: woff2 }),
      { token: t.adminPat },
    );
    expect(font.contentType).toBe("font/woff2");
    await activate();
    expect(await (await fetch(`${t.url}/ui/login/branding.css`)).text()).toContain(`src:url(/ui/login/assets/${font.sha256})`);

    const text = await rest(t.url, "POST", "/settings/v3alpha/branding/assets/logo", {
      token: t.adminPat,
      body: { data: Buffer.from("<svg onload=alert(1)>").toString("base64") },
    });
    expect(text.status).toBe(400);
    expect(text.body.message).toContain("invalid data");
    const pngAsFont = await rest(t.url, "POST", "/settings/v3alpha/branding/assets/font", { token: t.adminPat, body: { data: png } });
    expect(pngAsFont.status).toBe(400);
    expect((await rest(t.url, "POST", "/settings/v3alpha/branding/assets/banner", { token: t.adminPat, body: { data: png } })).body.message).toContain("kind");
    const big = Buffer.concat([Buffer.from(png, "base64"), Buffer.alloc(600 * 1024)]).toString("base64");
    expect((await rest(t.url, "POST", "/settings/v3alpha/branding/assets/logo", { token: t.adminPat, body: { data: big } })).body.message).toContain("KiB");
    // Reset removes it from the page.
    await branding("PATCH", "", { logo: { reset: true }, font: { reset: true } });
    await activate();
    expect(await (await fetch(`${t.url}${PAGE}`)).text()).not.toContain('img class="logo"');
  });

  it("need policy.write to set or activate", async () => {
    const user = await rest(t.url, "POST", "/resources/v3alpha/users", { token: t.adminPat, body: { username: "brand-reader", machine: { name: "reader" } } });
    const pat = await rest(t.url, "POST", `/resources/v3alpha/users/${user.body.details.id}/pats`, { token: t.adminPat, body: {} });
    const token = pat.body.token as string;
    expect((await rest(t.url, "GET", "/settings/v3alpha/branding", { token })).status).toBe(200);
    expect((await rest(t.url, "PATCH", "/settings/v3alpha/branding", { token, body: { primaryColor: { set: "#000000" } } })).status).toBe(403);
    expect((await rest(t.url, "POST", "/settings/v3alpha/branding/_activate", { token, body: {} })).status).toBe(403);
  });
});
