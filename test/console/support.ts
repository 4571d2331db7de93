import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { rest } from "../support/clients.js";
import type { TestServer } from "../support/server.js";

/** A browser profile for the console that records what the page logged: CSP violations, errors, failed calls. */
export async function consolePage(browser: Browser, opts: { locale?: string; colorScheme?: "light" | "dark"; acceptDownloads?: boolean } = {}) {
  const ctx: BrowserContext = await browser.newContext({
    locale: opts.locale ?? "en-US",
    colorScheme: opts.colorScheme ?? "light",
    acceptDownloads: opts.acceptDownloads ?? false,
  });
  const page = await ctx.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/Failed to load resource: the server responded with a status of 40[0134]/.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  return { ctx, page, problems };
}

/** Signs in on the login page the console sent the browser to (with the forced change of a first password). */
export async function signInAt(page: Page, username: string, password: string, newPassword?: string) {
  await page.waitForURL(/\/ui\/login/);
  await page.fill("#loginName", username);
  await page.click("button[type=submit]");
  await page.fill("#password", password);
  await page.click("button[type=submit]");
  if (newPassword) {
    await page.fill("input[name=newPassword]", newPassword);
    await page.fill("input[name=confirmPassword]", newPassword);
    await page.click("button[type=submit]");
  }
}

/** Moves inside the console as its links do (a new page load would sign in again: tokens live in memory). */
export async function go(page: Page, path: string) {
  await page.evaluate((p) => {
    history.pushState(null, "", `/ui/console${p}`);
    dispatchEvent(new PopStateEvent("popstate"));
  }, path);
}

/**
 * The page has its content: nothing marked busy and no "Loading…" line left in the main part (quicker than waiting
 * for the network to stay idle for half a second, which every page would pay).
 */
export async function loaded(page: Page) {
  await page.waitForFunction(
    () =>
      !document.querySelector("main [aria-busy=true]") &&
      ![...document.querySelectorAll("main [role=status]")].some((e) => /^(Loading|Wird geladen|Chargement)…$/.test(e.textContent ?? "")),
    undefined,
    { timeout: 10_000 },
  );
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe-core's serious and critical WCAG 2.2 AA violations on the page as it is. Injected through the DevTools
 * protocol (page.evaluate), which the page's CSP does not govern, so the CSP stays on while it runs.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const r = await (window as any).axe.run({ runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"] });
    return r.violations
      .filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`);
  });
}

export async function expectAccessible(page: Page, where: string) {
  expect(await axeViolations(page), where).toEqual([]);
}

/** A human with a password in an organisation (the default one when orgId is not given), made through the API. */
export async function human(t: TestServer, username: string, password: string, orgId?: string): Promise<string> {
  const r = await rest(t.url, "POST", `/resources/v3alpha/users${orgId ? `?ctx.orgId=${orgId}` : ""}`, {
    token: t.adminPat,
    body: {
      username,
      human: {
        profile: { givenName: username[0]!.toUpperCase() + username.slice(1), familyName: "Tester" },
        email: { address: `${username}@example.com`, isVerified: true },
        password: { password },
      },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}
