import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionSet, humanAdded, idpAdded, loginSettingsSet, oidcAppAdded, orgAdded, projectAdded, targetAdded } from "../../src/events/index.js";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { consoleBuild } from "../support/console.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { consolePage, expectAccessible, go, human, loaded, signInAt } from "./support.js";

/**
 * What an administrator does in the console, in Chromium against a real server (issue 30's proof): an organisation,
 * a user, a project with an OIDC application whose secret is shown once and works, an identity provider, a target
 * and an execution, a login setting seen on the login page, and each of these in the audit log. axe-core on every
 * page on the way. CONSOLE_SCREENSHOTS=<dir> keeps a screenshot of each page.
 */
let t: TestServer;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let problems: string[];
const shots = process.env.CONSOLE_SCREENSHOTS;

beforeAll(async () => {
  t = await startTestServer({ SVC_FIRSTINSTANCE_ADMIN_PASSWORD: "Configured-Secret-9" }, { consoleDir: await consoleBuild() });
  browser = await launchChromium();
  ({ ctx, page, problems } = await consolePage(browser, { acceptDownloads: true }));
  await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: t.url });
  await page.goto(`${t.url}/ui/console/`);
  await signInAt(page, "admin", "Configured-Secret-9", "Changed-Secret-77!");
  await page.waitForSelector("nav.side");
  if (shots) mkdirSync(shots, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const dialog = () => page.locator("dialog[open]");
const card = (title: string) => page.locator("section.card", { has: page.getByRole("heading", { name: title, exact: true }) });

/** The page is done loading, accessible, and (with CONSOLE_SCREENSHOTS) kept as a picture. */
async function looked(name: string) {
  await loaded(page);
  await expectAccessible(page, name);
  if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

describe("an administrator in the console", () => {
  let orgId: string;
  let projectId: string;

  it("creates an organisation", async () => {
    await go(page, "/orgs");
    await page.getByRole("button", { name: "New organization" }).click();
    await dialog().locator('[name="organization.name"]').fill("Flow Org");
    await dialog().locator("button[type=submit]").click();
    await page.waitForURL(/\/ui\/console\/orgs\/\d+$/);
    orgId = page.url().split("/").pop()!;
    await page.getByRole("heading", { level: 1, name: "Flow Org" }).waitFor();
    const read = await rest(t.url, "GET", `/resources/v3alpha/organizations/${orgId}`, { token: t.adminPat });
    expect(read.body.organization.name).toBe("Flow Org");
    await looked("organization");
  });

  it("creates a user, with an error at the field the server named first", async () => {
    await go(page, "/users/create/human");
    await page.fill('input[name="user.username"]', "flora");
    await page.fill('input[name="user.human.profile.given_name"]', "Flora");
    await page.fill('input[name="user.human.profile.family_name"]', "Flow");
    await page.fill('input[name="user.human.email.address"]', "flora@example.com");
    await page.fill('input[name="user.human.phone.number"]', "12");
    await page.getByRole("button", { name: "Create" }).click();
    await expect.poll(() => page.getAttribute('input[name="user.human.phone.number"]', "aria-invalid")).toBe("true");
    await looked("user-create-error");
    await page.fill('input[name="user.human.phone.number"]', "+41791234567");
    await page.getByLabel("Set a password now").check();
    await page.fill('input[name="user.human.password.password"]', "Flora-Secret-123!");
    await page.getByRole("button", { name: "Create" }).click();
    await page.waitForURL(/\/ui\/console\/users\/\d+$/);
    const id = page.url().split("/").pop()!;
    const read = await rest(t.url, "GET", `/resources/v3alpha/users/${id}`, { token: t.adminPat });
    expect(read.body.user.username).toBe("flora");
    await page.waitForSelector("section.card");
    await looked("user");
    await go(page, "/users");
    await page.locator("tbody tr", { hasText: "flora" }).waitFor();
    await looked("users");
  });

  it("creates a project and an OIDC application whose secret is shown once, copied, and works", async () => {
    await go(page, "/projects");
    await page.getByRole("button", { name: "New project" }).click();
    await dialog().locator('[name="project.name"]').fill("Shop");
    await dialog().locator("button[type=submit]").click();
    await page.waitForURL(/\/projects\/\d+$/);
    projectId = page.url().split("/").pop()!;
    await looked("project");
    await go(page, `/projects/${projectId}/apps/new`);
    await page.locator('[name="application.name"]').fill("Web shop");
    await page.locator('[name="application.oidc.redirect_uris[0]"]').fill("https://shop.example.com/cb");
    await page.locator("form button[type=submit]").click();
    const shown = page.locator('dialog[open] [data-testid="secret"]');
    await shown.waitFor();
    const secret = (await shown.textContent())!.trim();
    expect(secret.length).toBeGreaterThan(20);
    await dialog().getByRole("button", { name: "Copy" }).click();
    await dialog().getByRole("status").filter({ hasText: "Copied." }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await looked("application-secret");
    await dialog().getByRole("button", { name: "Close" }).click();
    // the secret authenticates the client: a wrong code is invalid_grant, a wrong secret invalid_client
    const app = await t.server.db.prisma.application.findFirstOrThrow({ where: { projectId, name: "Web shop" } });
    const token = (s: string) =>
      rest(t.url, "POST", "/oauth/v2/token", {
        body: new URLSearchParams({ grant_type: "authorization_code", code: "not-a-code", redirect_uri: "https://shop.example.com/cb" }).toString(),
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(s)}`).toString("base64")}`,
        },
      });
    expect((await token(secret)).body.error).toBe("invalid_grant");
    expect((await token(`${secret}x`)).body.error).toBe("invalid_client");
    // shown once: the application's page has no secret on it
    await page.waitForSelector("section.card");
    expect(await page.content()).not.toContain(secret);
    await looked("application");
  });

  it("creates an identity provider", async () => {
    await go(page, "/idps");
    await page.locator(".page-actions button").click();
    await page.locator('a[href$="/idps/new/oidc"]').click();
    await page.fill('[name="idp.idp.name"]', "Corp OIDC");
    await page.fill('[name="idp.config.issuer"]', "https://issuer.example.com");
    await page.fill('[name="idp.config.client_id"]', "client-1");
    await page.fill('[name="idp.config.client_secret"]', "s3cret-value");
    await page.locator('form button[type="submit"]').click();
    await page.waitForURL(/\/idps\/\d+$/);
    await page.locator('[name="idp.idp.name"]').waitFor();
    expect(await page.inputValue('[name="idp.config.client_secret"]')).toBe("");
    await looked("identity-provider");
  });

  it("creates a target and an execution that calls it", async () => {
    await go(page, "/actions");
    await page.locator("section.card").first().locator("button.primary").click();
    await dialog().locator("input[name='target.name']").fill("audit-hook");
    await dialog().locator("input[type=url]").fill("https://hooks.example.com/audit");
    await dialog().locator("input[name='target.timeout']").fill("5");
    await dialog().locator("button[type=submit]").click();
    await page.locator("dialog[open] [data-testid=secret]").waitFor();
    await dialog().getByRole("button", { name: "Close" }).click();
    await page.locator("tbody tr", { hasText: "audit-hook" }).waitFor();
    await page.locator("section.card").nth(1).locator("> .toolbar button.primary").click();
    await dialog().locator("select[name='execution.condition.request.service']").selectOption("grpc.health.v1.Health");
    await dialog().locator("select[name='execution.condition.request.method']").selectOption({ label: "Check" });
    const picker = dialog()
      .locator("fieldset")
      .filter({ has: page.locator("select[name='execution.targets']") });
    await picker.locator("select[name='execution.targets']").selectOption({ label: "audit-hook" });
    await picker.locator(".toolbar button").click();
    await dialog().locator("button[type=submit]").click();
    await expect.poll(() => page.locator("dialog[open]").count()).toBe(0);
    const executions = await rest(t.url, "POST", "/resources/v3alpha/executions/_search", { token: t.adminPat, body: {} });
    expect(executions.status, JSON.stringify(executions.body)).toBe(200);
    expect(executions.body.result).toHaveLength(1);
    await looked("actions");
  });

  it("changes a login setting of the instance, and the login page shows it", async () => {
    const registerLinks = async () => {
      const other = await browser.newContext();
      const login = await other.newPage();
      await login.goto(`${t.url}/ui/login`);
      const n = await login.getByRole("link", { name: "Register" }).count();
      await other.close();
      return n;
    };
    expect(await registerLinks()).toBe(0);
    await go(page, "/settings/login?ctx=instance");
    await card("Login").getByLabel("Allow self-registration").check();
    await card("Login").getByRole("button", { name: "Save" }).click();
    await card("Login").getByRole("status").filter({ hasText: "Saved." }).waitFor();
    expect(await registerLinks()).toBe(1);
    await looked("settings-login");
  });

  it("finds each of these changes in the audit log", async () => {
    await go(page, "/events");
    await page.locator("tbody tr").first().waitFor();
    await looked("audit-log");
    for (const event of [orgAdded, humanAdded, projectAdded, oidcAppAdded, idpAdded, targetAdded, executionSet, loginSettingsSet]) {
      await page.locator("input[name='filters.event_types.types']").fill(event.type);
      await page.locator("form button[type=submit]").click();
      await expect.poll(() => page.locator("tbody tr td:nth-child(2)").allTextContents(), { message: event.type }).toContain(event.type);
    }
    // an event's payload, redacted as the API redacts it: the target's signing key is not in it
    await page.locator("input[name='filters.event_types.types']").fill(targetAdded.type);
    await page.locator("form button[type=submit]").click();
    await page.locator("tbody tr").first().getByRole("button", { name: /Show/ }).click();
    const payload = await page.locator("pre.json").first().textContent();
    expect(payload).toContain("audit-hook");
    expect(payload).not.toMatch(/signingKey"\s*:\s*"[^"]/);
    await looked("audit-log-event");
  });

  it("lists an application's keys and removes one after asking", async () => {
    const app = await rest(t.url, "POST", `/resources/v3alpha/projects/${projectId}/applications`, {
      token: t.adminPat,
      body: { name: "Backend", api: { authMethodType: "API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT" } },
    });
    const appId = app.body.details.id as string;
    const key = await rest(t.url, "POST", `/resources/v3alpha/applications/${appId}/keys`, { token: t.adminPat, body: {} });
    await go(page, `/projects/${projectId}/apps/${appId}`);
    const row = page.locator("tbody tr", { hasText: key.body.keyId });
    await row.waitFor();
    await looked("application-keys");
    await row.getByRole("button", { name: "Remove" }).click();
    await dialog().locator("button.danger").click();
    await row.waitFor({ state: "detached" });
    expect((await rest(t.url, "GET", `/resources/v3alpha/applications/${appId}/keys`, { token: t.adminPat })).body.result ?? []).toEqual([]);
  });

  it("lists the one-time-code channels a user has turned on, and turns one off after asking", async () => {
    // codes by e-mail need a verified address
    const userId = await human(t, "otto", "Otto-Secret-123!");
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${userId}/otp_email`, { token: t.adminPat, body: {} })).status).toBe(200);
    await go(page, `/users/${userId}`);
    const item = page.locator("li", { hasText: "One-time codes by e-mail" });
    await item.waitFor();
    expect(await page.locator("li", { hasText: "Authenticator app (TOTP)" }).count()).toBe(0);
    await item.getByRole("button", { name: "Turn off codes by e-mail" }).click();
    await dialog().locator("button.danger").click();
    await item.waitFor({ state: "detached" });
    const methods = await rest(t.url, "GET", `/resources/v3alpha/users/${userId}/authentication_methods`, { token: t.adminPat });
    expect(methods.body.authMethodTypes).toEqual(["AUTHENTICATION_METHOD_TYPE_PASSWORD"]);
    await looked("user-factors");
  });

  it("exports an organisation as a job, downloads it, imports it back, and finds the jobs again after leaving", async () => {
    await go(page, "/portability");
    const exportCard = page.locator("section.card").first();
    const importCard = page.locator("section.card").nth(1);
    const row = (kind: string) =>
      page
        .locator("table tbody tr")
        .filter({ has: page.locator("td:first-child", { hasText: new RegExp(`^${kind}$`) }) })
        .first();
    await exportCard.getByLabel("Flow Org", { exact: true }).check();
    await exportCard.locator("button[type=submit]").click();
    await expect.poll(() => row("Export").locator("td").nth(1).textContent(), { timeout: 30_000 }).toBe("Done");
    await looked("export-done");
    const [download] = await Promise.all([page.waitForEvent("download"), row("Export").locator("button").click()]);
    const file = await download.path();
    const data = JSON.parse(readFileSync(file, "utf8")) as { orgs: { orgId: string }[] };
    expect(data.orgs.map((o) => o.orgId)).toEqual([orgId]);
    await importCard.locator("input[type=file][name=data_json]").setInputFiles(file);
    await importCard.locator("button[type=submit]").click();
    await expect.poll(() => row("Import").locator("td").nth(1).textContent(), { timeout: 30_000 }).toBe("Done");
    expect(await row("Import").locator("td").last().textContent()).toBe("Every object was placed.");
    // the jobs are the server's: away and back, they are listed as they were
    await go(page, "/users");
    await page.locator("tbody tr").first().waitFor();
    await go(page, "/portability");
    await expect.poll(() => page.locator("table tbody tr").count()).toBe(2);
    await looked("portability");
  });

  it("logged nothing wrong on the way (no CSP violation, no script error)", () => {
    expect(problems).toEqual([]);
  });
});
