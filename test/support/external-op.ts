import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/**
 * An external OpenID Connect provider for sign-in tests: oidc-provider (OpenID certified) on its own loopback
 * port, with its development login and consent pages (any login name and password sign in; the login name is
 * the account's ID). Its users' claims come from `users` (by login name), else a default derived from the name.
 */
export interface ExternalOp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

export type ExternalClaims = {
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
  given_name?: string;
  family_name?: string;
  name?: string;
};

export async function startExternalOp(redirectUri: string, users: Record<string, ExternalClaims> = {}): Promise<ExternalOp> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "svc-iam";
  const clientSecret = "external-op-client-secret-0123456789";
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ["authorization_code"], response_types: ["code"] },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["preferred_username", "given_name", "family_name", "name"] },
    features: { devInteractions: { enabled: true } },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        email: `${sub}@ext.example.com`,
        email_verified: true,
        preferred_username: sub,
        given_name: sub[0]!.toUpperCase() + sub.slice(1),
        family_name: "External",
        ...users[sub],
      }),
    }),
  });
  server.on("request", provider.callback());
  return { issuer, clientId, clientSecret, close: () => new Promise<void>((r) => server.close(() => r())) };
}
