import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { protoComments } from "../../gen/svc/proto_comments.js";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { newPage } from "../oidc/rp.js";

type Json = Record<string, any>;

let t: TestServer;
let doc: Json;
beforeAll(async () => {
  t = await startTestServer();
  doc = (await rest(t.url, "GET", "/openapi.json")).body;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** An RPC operation's description is its proto comment, then the paragraph of facts the builder adds ("Permission: ..." or "Public."). */
const commentOf = (description: string) => description.replace(/(?:^|\n\n)(?:Permission: |Public\.)[\s\S]*$/, "").trim();

/** The RPC operations (tagged with their service) and the others, as "VERB path" with the operation. */
function operations() {
  const rpc: [string, Json][] = [];
  const other: [string, Json][] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [verb, op] of Object.entries(item as Json)) (String(op.tags[0]).startsWith("svc.") ? rpc : other).push([`${verb.toUpperCase()} ${path}`, op]);
  }
  return { rpc, other };
}

/** Every property (at any depth, inline schemas included) and every parameter without a description, by where it is. */
function undescribedFields(): string[] {
  const missing: string[] = [];
  const walk = (schema: Json | undefined, at: string) => {
    if (!schema || typeof schema !== "object") return;
    for (const [name, p] of Object.entries((schema.properties ?? {}) as Json)) {
      if (!p.description) missing.push(`${at}.${name}`);
      walk(p, `${at}.${name}`);
    }
    walk(schema.items, `${at}[]`);
    for (const s of schema.allOf ?? []) walk(s, at);
  };
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) walk(schema, name);
  const { rpc, other } = operations();
  for (const [where, op] of [...rpc, ...other]) {
    for (const p of op.parameters ?? []) if (!p.description) missing.push(`${where} ${p.in} ${p.name}`);
    for (const c of Object.values((op.requestBody?.content ?? {}) as Json)) walk(c.schema, `${where} body`);
    for (const r of Object.values((op.responses ?? {}) as Json)) for (const c of Object.values((r.content ?? {}) as Json)) walk(c.schema, `${where} response`);
  }
  return missing;
}

describe("the OpenAPI document describes every operation and field from the proto comments", () => {
  it("carries each RPC's proto comment into its operations", () => {
    const { rpc } = operations();
    expect(rpc.length).toBeGreaterThan(200);
    for (const [where, op] of rpc) {
      const grpc = String(op.description).match(/at `\/([\w.]+)\/(\w+)`/);
      expect(grpc, where).not.toBeNull();
      const comment = protoComments[`${grpc![1]}.${grpc![2]}`];
      if (comment) expect(commentOf(op.description), where).toBe(comment);
    }
    // a field's comment reaches its schema property
    const execution = doc.components.schemas["svc.resources.action.v3alpha.Execution"].properties;
    expect(execution.targets.description).toBe(protoComments["svc.resources.action.v3alpha.Execution.targets"]);
  });

  // a new RPC or field without a comment in proto/ fails these (`buf build -o - | tsx scripts/proto-comments.ts
  // --missing` lists what the protos leave undescribed)
  it("has no RPC without a description", () => {
    const missing = operations()
      .rpc.filter(([, op]) => !commentOf(op.description))
      .map(([where]) => where);
    expect(missing, "RPC operations without a description").toEqual([]);
  });

  it("has no field or parameter without a description", () => {
    expect(undescribedFields(), "fields and parameters without a description").toEqual([]);
  });

  it("documents the endpoints no RPC describes, each with a description", () => {
    for (const [path, verb] of [
      ["/admin/v1/export", "post"],
      ["/admin/v1/import", "post"],
      ["/management/v1/users/human/_import", "post"],
      ["/.well-known/openid-configuration", "get"],
      ["/oauth/v2/authorize", "get"],
      ["/oauth/v2/token", "post"],
      ["/oauth/v2/introspect", "post"],
      ["/oidc/v1/userinfo", "get"],
      ["/oauth/v2/revoke", "post"],
      ["/oidc/v1/end_session", "get"],
      ["/oauth/v2/keys", "get"],
      ["/healthz", "get"],
      ["/readyz", "get"],
      ["/metrics", "get"],
    ] as const) {
      expect(doc.paths[path]?.[verb]?.description, `${verb} ${path}`).toBeTruthy();
    }
  });

  it("gives every operation with a body an example of it", () => {
    const { rpc, other } = operations();
    for (const [where, op] of [...rpc, ...other]) {
      const content = op.requestBody?.content;
      if (!content) continue;
      for (const c of Object.values(content as Json)) expect(c.example, where).toBeDefined();
    }
    // proto3 JSON takes one member of a oneof: the example names one
    const create = doc.paths["/resources/v3alpha/users"].post.requestBody.content["application/json"].example;
    expect(create).toBeTypeOf("object");
  });
});

describe("/docs", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("renders the reference from /openapi.json with request body examples, loading nothing from another origin, within 1280 px", async () => {
    const { ctx, page } = await newPage(browser, true);
    try {
      await page.setViewportSize({ width: 1280, height: 900 });
      const origin = new URL(t.url).origin;
      const elsewhere: string[] = [];
      const failures: string[] = [];
      page.on("request", (r) => {
        const url = r.url();
        if (/^https?:/.test(url) && new URL(url).origin !== origin) elsewhere.push(url);
      });
      page.on("console", (m) => {
        if (m.type() === "error") failures.push(m.text());
      });
      page.on("pageerror", (e) => failures.push(String(e)));
      const res = await page.goto(`${t.url}/docs`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
      // Redoc has rendered the operations and their request samples
      await page.getByText("Request samples").first().waitFor({ timeout: 120_000 });
      const op = page.locator('[data-section-id="tag/svc.resources.user.v3alpha.UserService/operation/UserService_CreateUser"]');
      await op.scrollIntoViewIfNeeded();
      await expect.poll(() => op.innerText(), { timeout: 30_000 }).toContain("Request samples");
      const sample = await op.locator("pre, code").allInnerTexts();
      // the request body example, as JSON, shows the user's fields
      expect(sample.join("\n")).toMatch(/"username"\s*:/);
      // Markdown: no raw backticks in the rendered descriptions
      const text = await page.locator(".api-content").innerText();
      expect(text).not.toMatch(/`[^`\n]+`/);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
      await page.screenshot({ path: "test-results/docs.png" }).catch(() => undefined);
      expect(elsewhere).toEqual([]);
      expect(failures).toEqual([]);
    } finally {
      await ctx.close();
    }
  }, 240_000);

  it("answers without JavaScript with the plain table", async () => {
    const page = await rest(t.url, "GET", "/docs");
    expect(page.headers["content-type"]).toContain("text/html");
    expect(page.body).toContain("<noscript>");
    expect(page.body).toContain("/settings/v3alpha/languages");
    const bundle = await fetch(`${t.url}/docs/redoc.standalone.js`);
    expect(bundle.status).toBe(200);
    expect(await bundle.text()).not.toContain("cdn.redoc.ly");
  });
});
