import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { newPage } from "../oidc/rp.js";

/**
 * Sign-in with a JWT an existing system issued (kind `jwt`): the browser goes to `jwt_endpoint`, a reverse proxy of
 * that system in front of this server (here: on the server's host, another port), which forwards the request to
 * the callback with the user's JWT in a header; the JWT is verified against `keys_endpoint`.
 */
let t: TestServer;
let browser: Browser;
let proxy: http.Server;
let proxyOrigin: string;
const ISSUER = "https://legacy.example";
let signingKey: CryptoKey;
let foreignKey: CryptoKey;
let jwks: { keys: unknown[] };
/** What the proxy puts in the header for the next request. */
let nextToken: () => Promise<string>;

const sign = (claims: JWTPayload, key = signingKey, kid = "legacy-1") =>
  new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid }).setIssuedAt().setIssuer(ISSUER).setExpirationTime("5m").sign(key);

beforeAll(async () => {
  t = await startTestServer();
  browser = await launchChromium();
  const pair = await generateKeyPair("RS256");
  signingKey = pair.privateKey;
  foreignKey = (await generateKeyPair("RS256")).privateKey;
  jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: "legacy-1", alg: "RS256", use: "sig" }] };
  // The legacy system's proxy: /keys its JWKS, /jwt forwards to this server's callback with the JWT added.
  proxy = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    if (url.pathname === "/keys") return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks));
    if (url.pathname !== "/jwt") return res.writeHead(404).end();
    const token = await nextToken();
    const forwarded = await fetch(`${t.url}/idps/callback${url.search}`, {
      headers: { cookie: req.headers.cookie ?? "", "x-legacy-token": `Bearer ${token}` },
      redirect: "manual",
    });
    const headers: Record<string, string | string[]> = {};
    forwarded.headers.forEach((v, k) => {
      if (k !== "content-encoding" && k !== "content-length" && k !== "transfer-encoding") headers[k] = v;
    });
    const setCookies = forwarded.headers.getSetCookie();
    if (setCookies.length) headers["set-cookie"] = setCookies;
    return res.writeHead(forwarded.status, headers).end(Buffer.from(await forwarded.arrayBuffer()));
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const created = await rest(t.url, "POST", "/resources/v3alpha/idps/jwt", {
    token: t.adminPat,
    body: {
      idp: { name: "Legacy JWT", options: { isAutoCreation: true } },
      config: { issuer: ISSUER, jwt_endpoint: `${proxyOrigin}/jwt`, keys_endpoint: `${proxyOrigin}/keys`, header_name: "x-legacy-token" },
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  proxy?.close();
  await t?.close();
});

/** The login page's button, the proxy, and the page the callback answered: its status. */
async function signIn(token: () => Promise<string>) {
  nextToken = token;
  const { page, ctx } = await newPage(browser);
  await page.goto(`${t.url}/ui/login?prompt=login`);
  // The outcome: the proxy's answer when the callback refused, else the page the callback moved the browser on to.
  const outcome = page.waitForResponse(
    (r) => (r.url().startsWith(`${proxyOrigin}/jwt`) && r.status() >= 400) || r.url().startsWith(`${t.url}/ui/login/idp/continue`),
  );
  await page.click('button.idp:has-text("Legacy JWT")');
  const status = (await outcome).status();
  await ctx.close();
  return status;
}

const userNamed = (loginName: string) => t.server.db.prisma.user.findFirst({ where: { instanceId: t.instanceId, loginName } });

describe("sign-in with a JWT from an existing system", () => {
  it("verifies the JWT the proxy adds and signs the user in (auto-created and linked)", async () => {
    const status = await signIn(() => sign({ sub: "legacy-42", preferred_username: "jules", email: "jules@legacy.example", email_verified: true }));
    expect(status).toBeLessThan(400);
    const jules = (await userNamed("jules"))!;
    expect(jules).toMatchObject({ email: "jules@legacy.example", emailVerified: true });
    expect(await t.server.db.prisma.userIdpLink.findMany({ where: { userId: jules.id } })).toMatchObject([{ externalUserId: "legacy-42" }]);
  });

  it("refuses an expired JWT, one of another issuer, one signed by a foreign key, an unsigned one, and none", async () => {
    const forged: [string, () => Promise<string>][] = [
      [
        "expired",
        () =>
          new SignJWT({ sub: "x1", preferred_username: "x1" })
            .setProtectedHeader({ alg: "RS256", kid: "legacy-1" })
            .setIssuer(ISSUER)
            .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
            .setExpirationTime(Math.floor(Date.now() / 1000) - 600)
            .sign(signingKey),
      ],
      [
        "other issuer",
        () =>
          new SignJWT({ sub: "x2", preferred_username: "x2" })
            .setProtectedHeader({ alg: "RS256", kid: "legacy-1" })
            .setIssuer("https://evil.example")
            .setIssuedAt()
            .setExpirationTime("5m")
            .sign(signingKey),
      ],
      ["foreign key", () => sign({ sub: "x3", preferred_username: "x3" }, foreignKey)],
      [
        "unsigned",
        async () =>
          `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${Buffer.from(JSON.stringify({ sub: "x4", preferred_username: "x4", iss: ISSUER, exp: Math.floor(Date.now() / 1000) + 300 })).toString("base64url")}.`,
      ],
      ["none", async () => ""],
    ];
    for (const [what, token] of forged) expect(await signIn(token), what).toBeGreaterThanOrEqual(400);
    for (const name of ["x1", "x2", "x3", "x4"]) expect(await userNamed(name)).toBeNull();
  });
});
