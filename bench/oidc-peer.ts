// The peer: oidc-provider (OpenID certified) with its in-memory store, configured like our server for the
// benchmarked calls: opaque access tokens living 12 h, a confidential client with client_secret_basic for
// client credentials and introspection, a client with private_key_jwt (its assertions stand in for our JWT
// profile grant, which oidc-provider does not have), and an access token of a user for userinfo.
import { generateKeyPairSync } from "node:crypto";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: "jwk" }), kid: "bench", alg: "RS256", use: "sig" };
const secret = "bench-secret-0123456789abcdefghij";
const issuer = "http://127.0.0.1";

const provider = new Provider(issuer, {
  clients: [
    { client_id: "machine", client_secret: secret, grant_types: ["client_credentials"], redirect_uris: [], response_types: [] },
    {
      client_id: "jwt-machine",
      token_endpoint_auth_method: "private_key_jwt",
      jwks: { keys: [jwk as never] },
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
    },
  ],
  features: { clientCredentials: { enabled: true }, introspection: { enabled: true }, devInteractions: { enabled: false } },
  scopes: ["openid", "profile", "api"],
  ttl: { ClientCredentials: 43_200, AccessToken: 43_200 },
  findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub, name: "Bench User", preferred_username: "bench" }) }),
});
// The user's token for userinfo, minted directly in the store (no browser flow in a benchmark).
const client = await provider.Client.find("machine");
const grant = new provider.Grant({ accountId: "bench-user", clientId: "machine" });
grant.addOIDCScope("openid profile");
const grantId = await grant.save();
const at = new provider.AccessToken({ accountId: "bench-user", client: client!, grantId, scope: "openid profile" });
const userToken = await at.save();

const server = provider.listen(0, () => {
  const port = (server.address() as AddressInfo).port;
  console.log(JSON.stringify({ userToken, secret, privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }) }));
  console.log(`listening on http://127.0.0.1:${port}`);
});
