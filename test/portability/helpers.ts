import { pbkdf2Sync, randomBytes } from "node:crypto";
import { rest } from "../support/clients.js";
import type { TestServer } from "../support/server.js";

/** A pbkdf2 hash in the form ZITADEL (passwap) and Keycloak migrations write: `$pbkdf2-<digest>$<rounds>$<salt b64>$<hash b64>`. */
export function pbkdf2Hash(password: string, digest: "sha1" | "sha256" | "sha512" = "sha256", rounds = 27500): string {
  const salt = randomBytes(16);
  const key = pbkdf2Sync(password, salt, rounds, digest === "sha512" ? 64 : 32, digest);
  const name = digest === "sha1" ? "pbkdf2" : `pbkdf2-${digest}`;
  return `$${name}$${rounds}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export const post = (t: TestServer, path: string, body: unknown, token = t.adminPat, headers: Record<string, string> = {}) =>
  rest(t.url, "POST", path, { token, body, headers });

/** A service user owning an organisation (ORG_OWNER there), for the management API. */
export async function orgOwner(t: TestServer, orgId: string, name: string): Promise<string> {
  return (await t.serviceUser(name, [{ type: "org", id: orgId, roles: ["ORG_OWNER"] }], orgId)).token;
}
