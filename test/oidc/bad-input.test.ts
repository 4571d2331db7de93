import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

// No request may crash the process or end in a 500: malformed input to the OAuth endpoints and the login UI
// gets a 4xx with an error that says what is wrong.
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const form = "application/x-www-form-urlencoded";
const bodies = ["", "%", "a=%E0%A4%A", "grant_type=%ZZ", "=&&==", "x".repeat(70 * 1024), '{"json": true}', `token=${"A".repeat(5000)}`, "\u0000\u0001"];
const headerSets: Record<string, string>[] = [
  {},
  { authorization: "Basic %%%" },
  { authorization: `Basic ${Buffer.from("%E0%A4%A:%").toString("base64")}` },
  { authorization: "Basic" },
  { authorization: "Bearer" },
  { authorization: `Bearer ${"x".repeat(10_000)}` },
  { cookie: "svc_agent=%E0%A4%A; svc_csrf=%" },
];

describe("bad input", () => {
  it("the OAuth endpoints answer 4xx, never 5xx, and stay up", async () => {
    for (const path of ["/oauth/v2/token", "/oauth/v2/introspect", "/oauth/v2/revoke", "/oidc/v1/userinfo", "/oauth/v2/authorize", "/oidc/v1/end_session"]) {
      for (const body of bodies) {
        for (const headers of headerSets) {
          const r = await rest(t.url, "POST", path, { body, headers: { "content-type": form, ...headers } });
          expect(r.status, `${path} ${body.slice(0, 20)} ${JSON.stringify(headers).slice(0, 60)}`).toBeLessThan(500);
        }
      }
    }
    for (const query of [
      "?%",
      "?client_id=%E0%A4%A",
      "?client_id=x&client_id=y",
      `?state=${"s".repeat(8000)}`,
      "?redirect_uri=javascript:alert(1)&client_id=a",
    ]) {
      for (const path of [
        "/oauth/v2/authorize",
        "/oidc/v1/end_session",
        "/oauth/v2/authorize/callback",
        "/oidc/v1/userinfo",
        "/ui/login",
        "/ui/login/register",
        "/ui/login/logout",
      ]) {
        const r = await rest(t.url, "GET", `${path}${query}`, { headers: { cookie: "svc_agent=%E0%A4%A" } });
        expect(r.status, `${path}${query.slice(0, 40)}`).toBeLessThan(500);
      }
    }
    expect((await rest(t.url, "GET", "/healthz")).status).toBe(200);
  });

  it("the login UI's forms refuse malformed posts with 4xx", async () => {
    for (const path of [
      "/ui/login/loginname",
      "/ui/login/password",
      "/ui/login/password/change",
      "/ui/login/select",
      "/ui/login/register",
      "/ui/login/logout",
      "/ui/login/idp/link",
      "/ui/login/idp/register",
      "/ui/login/idp/autolink",
    ]) {
      for (const body of bodies) {
        const r = await rest(t.url, "POST", path, { body, headers: { "content-type": form, cookie: "svc_csrf=%" } });
        expect(r.status, `${path} ${body.slice(0, 20)}`).toBeGreaterThanOrEqual(400);
        expect(r.status, `${path} ${body.slice(0, 20)}`).toBeLessThan(500);
      }
    }
  });
});
