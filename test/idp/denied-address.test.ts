import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Providers under the one outbound policy (SVC_TARGET_DENY, by default everything but public addresses): a provider
 * whose URL points at a denied address (here loopback) is never contacted, through the login UI or an intent, and
 * the answer is a clear refusal, never a 5xx.
 */
let t: TestServer;
let target: http.Server;
let origin: string;
let requests = 0;

beforeAll(async () => {
  target = http.createServer((_req, res) => {
    requests++;
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  // The default policy (an empty value is the default), as an operator runs it.
  t = await startTestServer({ SVC_TARGET_DENY: "" });
});
afterAll(async () => {
  await t?.close();
  target?.close();
});

describe("a provider at a denied address", () => {
  it("is never contacted: the login UI's start and an intent are refused with a clear answer", async () => {
    const created = await rest(t.url, "POST", "/resources/v3alpha/idps/oidc", {
      token: t.adminPat,
      body: { idp: { name: "Internal SSO" }, config: { issuer: origin, client_id: "c", client_secret: "s" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.details.id as string;

    // the login page's button (its CSRF token and cookie as a browser sends them)
    const page = await fetch(`${t.url}/ui/login`);
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const started = await fetch(`${t.url}/ui/login/idp/start`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: t.url },
      body: new URLSearchParams({ csrf, idpId: id }),
      redirect: "manual",
    });
    expect(started.status).toBe(400);
    expect(await started.text()).toMatch(/did not succeed/);

    const loginClient = (await t.serviceUser("denied-login-client", [{ type: "instance", id: t.instanceId, roles: ["IAM_LOGIN_CLIENT"] }])).token;
    const intent = await rest(t.url, "POST", "/resources/v3alpha/idp_intents", {
      token: loginClient,
      body: { idp_id: id, success_url: "https://app.example/ok", failure_url: "https://app.example/failed" },
    });
    expect(intent.status).toBe(400);
    expect(intent.body.message).toMatch(/could not be reached/);
    expect(requests).toBe(0);
  });
});
