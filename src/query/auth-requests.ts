import type { AuthRequest } from "../../gen/prisma/client.js";
import type { Database } from "../storage/database.js";

export type AuthRequestRow = AuthRequest;

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
