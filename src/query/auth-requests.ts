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

/** The login UI signs in a moment after the request arrived; a sign-in this close before it still counts as made for it. */
const SIGN_IN_SLACK_MS = 1000;

/** Whether a sign-in at `authTime` is older than `maxAge` seconds (no max_age: never). */
export function olderThanMaxAge(maxAge: number | undefined, authTime: Date, now: number): boolean {
  return maxAge !== undefined && now - authTime.getTime() > maxAge * 1000;
}

/**
 * Why a session signed in at `authTime` cannot complete the request, or undefined when it can (OIDC Core
 * §3.1.2.1): prompt=login asks for a sign-in made for this request, max_age for one recent enough. A sign-in made
 * for the request (after it arrived) satisfies both: it is the re-authentication they ask for, and so max_age=0,
 * prompt=login's equivalent, can be met at all. The one rule of the browser callback and the sessions API.
 */
export function staleSignIn(
  request: Pick<StoredAuthorization, "prompt" | "maxAge">,
  requestedAt: Date,
  authTime: Date,
  now: number,
): "prompt=login" | "max_age" | undefined {
  if (authTime.getTime() >= requestedAt.getTime() - SIGN_IN_SLACK_MS) return undefined;
  if (request.prompt.includes("login")) return "prompt=login";
  return olderThanMaxAge(request.maxAge, authTime, now) ? "max_age" : undefined;
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
