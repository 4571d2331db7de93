import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateSessionRequestSchema, GetSessionRequestSchema, SessionService } from "../../gen/svc/resources/session/v3alpha/session_service_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import type { TestServer } from "../support/server.js";
import { decodedMail, type MailServer } from "../support/smtp.js";
import { addHuman, rpConfig, webApp } from "../oidc/rp.js";
import { totpCode, wrongTotpCode } from "../support/totp.js";

// The sessions API: a custom login UI signs users in with checks and finishes authorization requests with them.
let t: TestServer;
let mail: MailServer;
let close: () => Promise<void>;
let loginClient: string;
const PASSWORD = "Secr3t!pass";
const CUSTOM_UI = "https://login.example.com/ui";

beforeAll(async () => {
  ({ t, mail, close } = await startMessagingServer());
  loginClient = (await t.serviceUser("login-client", [{ type: "instance", id: t.instanceId, roles: ["IAM_LOGIN_CLIENT"] }])).token;
  const set = await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { customLoginUrl: { set: CUSTOM_UI } } });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
});
afterAll(async () => {
  await close?.();
});

const sessions = (method: string, path: string, body?: unknown, token = loginClient) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token, ...(body ? { body } : {}) });

/** A relying party (openid-client) starts a code flow; the custom login UI receives the request's ID. */
async function startFlow(extra: Record<string, string> = {}) {
  const app = await webApp(t, { origin: "https://rp.example.com" }, `rp-${Math.random().toString(36).slice(2, 8)}`);
  const config = await rpConfig(t.url, app.clientId, app.clientSecret, client.ClientSecretBasic(app.clientSecret));
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: "https://rp.example.com/cb",
    scope: "openid profile",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...extra,
  });
  const res = await fetch(url, { redirect: "manual", headers: { "x-svc-login-client": "custom" } });
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(CUSTOM_UI);
  const authRequest = location.searchParams.get("authRequest")!;
  const finish = (callbackUrl: string) =>
    client.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
  return { authRequest, finish, config };
}

describe("sessions API and custom login UI", () => {
  it("completes an OIDC code flow for an RP library driven only through the sessions API", async () => {
    const userId = await addHuman(t, "sessa", PASSWORD);
    const { authRequest, finish, config } = await startFlow({ login_hint: "sessa" });
    const got = await sessions("GET", `/auth_requests/${authRequest}`);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.authRequest).toMatchObject({ id: authRequest, scope: ["openid", "profile"], redirectUri: "https://rp.example.com/cb", loginHint: "sessa" });

    const created = await sessions("POST", "/sessions", { checks: { user: { loginName: "sessa" }, password: { password: PASSWORD } }, lifetime: "3600s" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const session = { sessionId: created.body.details.id as string, sessionToken: created.body.sessionToken as string };
    expect(session.sessionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only the token's hash is stored.
    const row = await t.server.db.prisma.loginSession.findUniqueOrThrow({ where: { id: session.sessionId } });
    expect(row.tokenHash).not.toContain(session.sessionToken);

    const callback = await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session });
    expect(callback.status, JSON.stringify(callback.body)).toBe(200);
    const tokens = await finish(callback.body.callbackUrl);
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(userId);
    expect(claims.sid).toBe(session.sessionId);
    expect(claims.amr).toEqual(["pwd"]);
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(true);

    // The request is used up; deleting the session ends its tokens.
    expect((await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session })).status).toBe(404);
    expect((await sessions("DELETE", `/sessions/${session.sessionId}`)).status).toBe(200);
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it("adds a TOTP check to a session (mfa), and a forced second factor needs it before the callback", async () => {
    const userId = await addHuman(t, "sessb", PASSWORD);
    const secret = (await rest(t.url, "POST", `/resources/v3alpha/users/${userId}/totp`, { token: t.adminPat, body: {} })).body.secret as string;
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${userId}/totp/_verify`, { token: t.adminPat, body: { code: totpCode(secret) } })).status).toBe(
      200,
    );
    await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { forceMfa: { set: true } } });
    try {
      const { authRequest, finish } = await startFlow();
      const created = await sessions("POST", "/sessions", { checks: { user: { userId }, password: { password: PASSWORD } } });
      const session = { sessionId: created.body.details.id as string, sessionToken: created.body.sessionToken as string };
      const early = await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session });
      expect(early.status).toBe(400);
      expect(early.body.message).toContain("second factor");

      const wrongCode = wrongTotpCode(secret);
      const wrong = await sessions("PATCH", `/sessions/${session.sessionId}`, { sessionToken: session.sessionToken, checks: { totp: { code: wrongCode } } });
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toContain("checks.totp.code");
      const ok = await sessions("PATCH", `/sessions/${session.sessionId}`, {
        sessionToken: session.sessionToken,
        checks: { totp: { code: totpCode(secret) } },
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.sessionToken).toBe(session.sessionToken);
      const read = await sessions("GET", `/sessions/${session.sessionId}`);
      expect(read.body.session.factors.totp.verifiedAt).toBeTruthy();
      expect(read.body.session.factors.password.verifiedAt).toBeTruthy();
      expect(read.body.session.factors.user).toMatchObject({ id: userId, loginName: "sessb", organizationId: t.defaultOrgId });

      const callback = await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session });
      expect(callback.status, JSON.stringify(callback.body)).toBe(200);
      expect((await finish(callback.body.callbackUrl)).claims()!.amr).toEqual(["pwd", "otp", "mfa"]);
    } finally {
      await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { forceMfa: { reset: true } } });
    }
  });

  it("sends a one-time code by e-mail on request and takes it as a second factor", async () => {
    const userId = await addHuman(t, "sessf", PASSWORD);
    await rest(t.url, "PATCH", "/settings/v3alpha/login", { token: t.adminPat, body: { secondFactors: { set: { value: ["otp", "otp_email"] } } } });
    // Not turned on yet: the challenge names itself.
    const notOn = await sessions("POST", "/sessions", { checks: { user: { userId }, password: { password: PASSWORD } }, challenges: { otpEmail: true } });
    expect(notOn.status).toBe(400);
    expect(notOn.body.message).toContain("challenges.otp_email");
    expect((await rest(t.url, "POST", `/resources/v3alpha/users/${userId}/otp_email`, { token: t.adminPat })).status).toBe(200);

    const { authRequest, finish } = await startFlow();
    const created = await sessions("POST", "/sessions", { checks: { user: { userId }, password: { password: PASSWORD } }, challenges: { otpEmail: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const session = { sessionId: created.body.details.id as string, sessionToken: created.body.sessionToken as string };
    const [m] = await mailsTo(mail, "sessf@example.com");
    const code = /sign-in code is (\w+)/.exec(decodedMail(m!.raw))![1]!;
    const wrong = await sessions("PATCH", `/sessions/${session.sessionId}`, { sessionToken: session.sessionToken, checks: { otpEmail: { code: "WRONG1" } } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain("checks.otp_email.code");
    const ok = await sessions("PATCH", `/sessions/${session.sessionId}`, { sessionToken: session.sessionToken, checks: { otpEmail: { code } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // Single use.
    expect((await sessions("PATCH", `/sessions/${session.sessionId}`, { sessionToken: session.sessionToken, checks: { otpEmail: { code } } })).status).toBe(
      400,
    );
    expect((await sessions("GET", `/sessions/${session.sessionId}`)).body.session.factors.otpEmail.verifiedAt).toBeTruthy();
    const callback = await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session });
    expect((await finish(callback.body.callbackUrl)).claims()!.amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("refuses wrong passwords, wrong or foreign tokens, sessions without a credential, and names the fields", async () => {
    const userId = await addHuman(t, "sessc", PASSWORD);
    const bad = await sessions("POST", "/sessions", { checks: { user: { userId }, password: { password: "wrong" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("checks.password.password");
    expect(await t.server.db.prisma.loginSession.count({ where: { userId } })).toBe(0);
    expect((await sessions("POST", "/sessions", { checks: { password: { password: PASSWORD } } })).body.message).toContain("checks.user");
    expect((await sessions("POST", "/sessions", { checks: { user: { loginName: "nobody-here" } } })).status).toBe(404);
    expect((await sessions("POST", "/sessions", { checks: { user: { userId } }, lifetime: "3000000s" })).body.message).toContain("lifetime");

    const userOnly = await sessions("POST", "/sessions", { checks: { user: { userId } } });
    expect(userOnly.status).toBe(201);
    const session = { sessionId: userOnly.body.details.id as string, sessionToken: userOnly.body.sessionToken as string };
    const { authRequest } = await startFlow();
    const noCredential = await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session });
    expect(noCredential.status).toBe(400);
    expect(noCredential.body.message).toContain("password");
    const wrongToken = await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session: { ...session, sessionToken: "x".repeat(43) } });
    expect(wrongToken.status).toBe(404);
    const patchWrongToken = await sessions("PATCH", `/sessions/${session.sessionId}`, {
      sessionToken: "y".repeat(43),
      checks: { password: { password: PASSWORD } },
    });
    expect(patchWrongToken.status).toBe(404);
    const otherUser = await addHuman(t, "sessd", PASSWORD);
    const switched = await sessions("PATCH", `/sessions/${session.sessionId}`, { sessionToken: session.sessionToken, checks: { user: { userId: otherUser } } });
    expect(switched.status).toBe(400);
    expect(switched.body.message).toContain("checks.user");
    expect((await sessions("GET", "/auth_requests/unknown-request")).status).toBe(404);
  });

  it("over gRPC, searches sessions by user, and needs the session permissions", async () => {
    const userId = await addHuman(t, "sesse", PASSWORD);
    const opts = { token: loginClient };
    const req = create(CreateSessionRequestSchema, {
      checks: { user: { search: { case: "userId", value: userId } }, password: { password: PASSWORD } },
    });
    const created = await call("grpc", t.url, SessionService, SessionService.method.createSession, req, opts);
    const got = await call("grpc", t.url, SessionService, SessionService.method.getSession, create(GetSessionRequestSchema, { id: created.details!.id }), opts);
    expect(got.session?.factors?.user?.id).toBe(userId);
    expect(got.session?.factors?.password?.verifiedAt).toBeDefined();

    const found = await sessions("POST", "/sessions/_search", { filters: [{ userId }] });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.result.map((s: { id: string }) => s.id)).toEqual([created.details!.id]);
    expect(found.body.details.totalResult).toBe("1");

    const outsider = (await t.serviceUser("no-sessions")).token;
    expect((await sessions("POST", "/sessions", { checks: { user: { userId } } }, outsider)).status).toBe(403);
    expect((await sessions("POST", "/sessions/_search", {}, outsider)).status).toBe(403);
    await expectCode(call("grpc", t.url, SessionService, SessionService.method.createSession, req, { token: outsider }), Code.PermissionDenied);
    // Without the header, the built-in login UI as before.
    const app = await webApp(t, { origin: "https://rp.example.com" }, "plain");
    const config = await rpConfig(t.url, app.clientId, app.clientSecret);
    const plain = await fetch(
      client.buildAuthorizationUrl(config, {
        redirect_uri: "https://rp.example.com/cb",
        scope: "openid",
        code_challenge: "a".repeat(43),
        code_challenge_method: "S256",
      }),
      { redirect: "manual" },
    );
    expect(new URL(plain.headers.get("location")!, t.url).pathname).toBe("/ui/login");
  });

  it("a request naming another organisation is not completed with a session of a user outside it", async () => {
    const other = await t.org("Sessions Other Org");
    await addHuman(t, "sessorg", PASSWORD);
    const { authRequest } = await startFlow({ scope: `openid urn:svc:iam:org:id:${other}` });
    const created = await sessions("POST", "/sessions", { checks: { user: { loginName: "sessorg" }, password: { password: PASSWORD } } });
    const session = { sessionId: created.body.details.id, sessionToken: created.body.sessionToken };
    const refused = await sessions("POST", `/auth_requests/${authRequest}/_callback`, { session });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("not a member of the organization");
  });
});
