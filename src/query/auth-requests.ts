import type { AuthRequest } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";

export type AuthRequestRow = AuthRequest;

/**
 * The stored request (`request` of a row), as the sessions API reads it: the OIDC provider validated and wrote
 * it (`ValidatedRequest` of src/oidc/authorize.ts, which has these fields and more).
 */
export interface StoredAuthorization {
  redirectUri: string;
  responseType: string;
  responseMode: string;
  scopes: string[];
  state?: string;
  prompt: string[];
  maxAge?: number;
  loginHint?: string;
  uiLocales?: string;
}

/** Reads of the OIDC provider's authorization requests; never cached: each is read once or twice, and changes. */
export class AuthRequestQueries {
  constructor(private readonly db: Database) {}

  /** The request, when it belongs to the instance (the callback's `id`). */
  async byId(instanceId: string, id: string): Promise<AuthRequestRow | null> {
    return inInstance(instanceId, await this.db.prisma.authRequest.findUnique({ where: { id } }));
  }

  /** The request that issued the code, by the code's SHA-256, when it belongs to the instance. */
  async byCodeHash(instanceId: string, codeHash: string): Promise<AuthRequestRow | null> {
    return inInstance(instanceId, await this.db.prisma.authRequest.findUnique({ where: { codeHash } }));
  }
}

const inInstance = <R extends { instanceId: string }>(instanceId: string, row: R | null): R | null => (row?.instanceId === instanceId ? row : null);
