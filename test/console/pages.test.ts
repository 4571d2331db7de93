import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { consoleBuild } from "../support/console.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { axeViolations, consolePage, go, human, loaded, signInAt } from "./support.js";

/**
 * Every page of the console, each with something on it, in English and light and in German and dark: axe-core finds
 * no serious or critical WCAG 2.2 AA violation, and nothing is logged (no CSP violation, no script error).
 */
let t: TestServer;
let browser: Browser;
const paths: string[] = [];

beforeAll(async () => {
  t = await startTestServer({ SVC_FIRSTINSTANCE_ADMIN_PASSWORD: "Configured-Secret-9" }, { consoleDir: await consoleBuild() });
  browser = await launchChromium();
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await rest(t.url, method, path, { token: t.adminPat, ...(body ? { body } : {}) });
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };
  const orgId = await t.org("Pages Org");
  const userId = await human(t, "paula", "Paula-Secret-123!");
  const machine = await t.serviceUser("pages-bot");
  const projectId = (await api("POST", "/resources/v3alpha/projects", { name: "Pages" })).details.id;
  await api("POST", `/resources/v3alpha/projects/${projectId}/roles`, { key: "reader", displayName: "Reader" });
  const appId = (
    await api("POST", `/resources/v3alpha/projects/${projectId}/applications`, {
      name: "Pages web",
      oidc: { redirectUris: ["https://pages.example.com/cb"] },
    })
  ).details.id;
  const idpId = (
    await api("POST", "/resources/v3alpha/idps/oidc", {
      idp: { name: "Pages SSO" },
      config: { issuer: "https://sso.example.com", client_id: "c", client_secret: "s" },
    })
  ).details.id;
  const targetId = (await api("POST", "/resources/v3alpha/targets", { name: "pages-hook", restWebhook: { url: "https://hooks.example.com/x" }, timeout: "5s" }))
    .details.id;
  const smtpId = (await api("POST", "/resources/v3alpha/smtp_providers", { host: "smtp.example.com", senderAddress: "noreply@example.com" })).details.id;
  const smsId = (await api("POST", "/resources/v3alpha/sms_providers", { http: { url: "https://sms.example.com/send" } })).details.id;
  paths.push(
    "/",
    "/orgs",
    `/orgs/${orgId}`,
    "/users",
    "/users/create/human",
    "/users/create/machine",
    `/users/${userId}`,
    `/users/${machine.userId}`,
    "/projects",
    `/projects/${projectId}`,
    `/projects/${projectId}/roles`,
    `/projects/${projectId}/apps`,
    `/projects/${projectId}/apps/new`,
    `/projects/${projectId}/apps/${appId}`,
    `/projects/${projectId}/grants`,
    `/projects/${projectId}/user-grants`,
    "/idps",
    "/idps/new/oidc",
    "/idps/new/ldap",
    "/idps/new/saml",
    `/idps/${idpId}`,
    "/settings",
    ...["login", "languages", "texts", "branding", "security", "domain", "features"].map((k) => `/settings/${k}`),
    "/actions",
    `/actions/targets/${targetId}`,
    "/events",
    "/portability",
    "/notifications",
    "/notifications/smtp/new",
    `/notifications/smtp/${smtpId}`,
    "/notifications/sms/new",
    `/notifications/sms/${smsId}`,
    "/instances",
    `/instances/${t.instanceId}`,
    "/no/such/page",
  );
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("every page of the console", () => {
  for (const [locale, colorScheme, password] of [
    ["en-US", "light", "Configured-Secret-9"],
    ["de-DE", "dark", "Changed-Secret-77!"],
  ] as const) {
    it(`is accessible and logs nothing wrong in ${locale}, ${colorScheme}`, { timeout: 240_000 }, async () => {
      const { ctx, page, problems } = await consolePage(browser, { locale, colorScheme });
      await page.goto(`${t.url}/ui/console/`);
      await signInAt(page, "admin", password, password === "Configured-Secret-9" ? "Changed-Secret-77!" : undefined);
      await page.waitForSelector("nav.side");
      const found: string[] = [];
      for (const path of paths) {
        await go(page, path);
        await page.waitForSelector("main h1");
        await loaded(page);
        for (const v of await axeViolations(page)) found.push(`${path}: ${v}`);
      }
      expect(found).toEqual([]);
      expect(problems).toEqual([]);
      await ctx.close();
    });
  }
});
