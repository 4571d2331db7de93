import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepExpiredRequests } from "../../src/command/auth-requests.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman, codeOverHttp, createApp, rpConfig } from "../oidc/rp.js";

// Security review #22: every anonymous GET /oauth/v2/authorize with a valid client and redirect URI appended a
// permanent event (oidc.auth_request.added), with state and nonce as long as the URL allows. Now a request waits
// for its sign-in as a row that expires, its event comes with the sign-in, and every parameter has a bound.

const PASSWORD = "Secr3t!pass";
const CB = "https://rp.example.com/cb";
let t: TestServer;
let web: Awaited<ReturnType<typeof createApp>>;

const params = (extra: Record<string, string> = {}) =>
  new URLSearchParams({ client_id: web.clientId, redirect_uri: CB, response_type: "code", scope: "openid", ...extra });
const authorize = (extra: Record<string, string> = {}) => rest(t.url, "GET", `/oauth/v2/authorize?${params(extra)}`);
const events = () => t.server.db.prisma.event.count({ where: { instanceId: t.instanceId } });
const authRequestEvents = (id?: string) =>
  t.server.db.prisma.event.findMany({ where: { aggregateType: "auth_request", ...(id ? { aggregateId: id } : {}) }, orderBy: { position: "asc" } });
/** The error the client gets back at its redirect URI. */
function errorAtClient(r: { status: number; headers: Record<string, unknown> }) {
  expect(r.status).toBe(303);
  const back = new URL(r.headers.location as string);
  expect(`${back.origin}${back.pathname}`).toBe(CB);
  return { error: back.searchParams.get("error"), description: back.searchParams.get("error_description"), state: back.searchParams.get("state") };
}

beforeAll(async () => {
  t = await startTestServer();
  await addHuman(t, "alice", PASSWORD);
  web = await createApp(t, "web", {
    redirectUris: [CB],
    grantTypes: ["OIDC_GRANT_TYPE_AUTHORIZATION_CODE"],
    appType: "OIDC_APP_TYPE_WEB",
    authMethodType: "OIDC_AUTH_METHOD_TYPE_BASIC",
  });
});
afterAll(() => t?.close());

describe("security review #22: anonymous authorization requests and the permanent log", () => {
  it("anonymous requests append no event; they wait as rows that are deleted once expired", async () => {
    const before = await events();
    const started = await Promise.all(Array.from({ length: 20 }, (_, i) => authorize({ state: `s${i}`, nonce: "n".repeat(1000) })));
    for (const r of started) expect(new URL(r.headers.location!, t.url).pathname).toBe("/ui/login");
    expect(await events()).toBe(before);
    const ids = started.map((r) => new URL(new URL(r.headers.location!, t.url).searchParams.get("return_to")!, t.url).searchParams.get("id")!);
    const pending = () => t.server.db.prisma.authRequest.count({ where: { id: { in: ids } } });
    expect(await pending()).toBe(20);
    // once expired, nobody can complete them, and the sweep deletes them
    await t.server.db.prisma.authRequest.updateMany({ where: { id: { in: ids } }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await sweepExpiredRequests(t.server.es)).toBeGreaterThanOrEqual(20);
    expect(await pending()).toBe(0);
  });

  it("the request's events are appended when a user signs in for it, and the flow works as before", async () => {
    const before = (await authRequestEvents()).length;
    const { location } = await codeOverHttp(t, Object.fromEntries(params({ state: "st" })), "alice", PASSWORD);
    const config = await rpConfig(t.url, web.clientId, web.clientSecret, client.ClientSecretBasic(web.clientSecret));
    const tokens = await client.authorizationCodeGrant(config, new URL(location), { expectedState: "st" });
    expect(tokens.id_token).toBeTruthy();
    const appended = (await authRequestEvents()).slice(before);
    expect(appended.map((e) => e.type)).toEqual([
      "oidc.auth_request.added",
      "oidc.auth_request.succeeded",
      "oidc.auth_request.code_exchanged",
      "oidc.auth_request.tokens_issued",
    ]);
    expect(new Set(appended.map((e) => e.aggregateId)).size).toBe(1);
    expect(appended[0]!.payload).toMatchObject({ clientId: web.clientId, request: { state: "st", redirectUri: CB } });
  });

  it("every authorize parameter has a length bound: invalid_request naming it, at the client once the redirect URI is known", async () => {
    // at the bound: accepted
    expect(new URL((await authorize({ state: "s".repeat(2000) })).headers.location!, t.url).pathname).toBe("/ui/login");
    const over: Record<string, string> = {
      state: "s".repeat(2001),
      nonce: "n".repeat(2001),
      login_hint: "a".repeat(201),
      ui_locales: "de ".repeat(100),
      acr_values: "x".repeat(501),
      claims: `{"id_token":{"x":"${"y".repeat(4000)}"}}`,
      id_token_hint: "e".repeat(10_001),
      scope: `openid ${"profile ".repeat(600)}`,
    };
    const before = await t.server.db.prisma.authRequest.count();
    for (const [name, value] of Object.entries(over)) {
      const f = errorAtClient(await authorize({ state: "ok", [name]: value }));
      expect(f.error, name).toBe("invalid_request");
      expect(f.description).toMatch(new RegExp(`^${name} must not be longer than \\d+ characters$`));
      // a state within its bound comes back; one beyond it is not echoed
      expect(f.state).toBe(name === "state" ? null : "ok");
    }
    expect(await t.server.db.prisma.authRequest.count()).toBe(before);
    // before the client is known, an error page (never a redirect)
    const tooLong: Record<string, string>[] = [{ client_id: "c".repeat(201) }, { redirect_uri: `${CB}?${"x".repeat(2000)}` }];
    for (const bad of tooLong) {
      const r = await authorize(bad);
      expect(r.status).toBe(400);
      expect(r.headers.location).toBeUndefined();
      expect(String(r.body)).toMatch(/must not be longer than/);
    }
  });
});
