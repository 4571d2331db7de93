import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import type { SecretBox } from "../crypto/secrets.js";
import { type Clock, systemClock } from "../domain/clock.js";
import type { Database } from "../storage/database.js";
import type { ProjectionCache } from "./cache.js";
import { readFrom } from "./sources.js";

/** A key within this much of the end of its signing time is not chosen: the next one is made instead. */
export const SIGNING_GRACE_MS = 60_000;

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  useUntil: Date;
}

export interface PublicKey {
  kid: string;
  jwk: Record<string, unknown>;
  key: KeyObject;
  publishUntil: Date;
}

/**
 * The instances' RS256 signing keys: the newest signs until its time is up, and every public key stays
 * published until the last token it signed expires. Reads only: a key is made by `ensureSigningKey` or
 * `rotateSigningKey` (command/signing-keys.ts), which the caller runs when `signer` finds none.
 */
export class SigningKeyQueries {
  // A key never changes once made: each half is parsed (and the private one opened) once, not per token.
  private readonly publicKeys = new Map<string, KeyObject>();
  private readonly privateKeys = new Map<string, KeyObject>();

  constructor(
    private readonly db: Database,
    private readonly cache: ProjectionCache,
    private readonly box: SecretBox,
    /** The time the schedule is read at: which key signs, which are published. */
    private readonly clock: Clock = systemClock,
  ) {}

  private rows(instanceId: string) {
    return this.cache.get(
      `signing-keys:${instanceId}`,
      () => this.db.reads.prisma.signingKey.findMany({ where: { instanceId }, orderBy: { createdAt: "desc" } }),
      readFrom("signingKey"),
    );
  }

  /** The keys still published, newest first, as the web key API lists them. */
  async listed(instanceId: string) {
    return (await this.rows(instanceId)).filter((r) => r.publishUntil.getTime() > this.clock.now());
  }

  /** The keys to publish: every key whose tokens may still be valid. */
  async published(instanceId: string): Promise<PublicKey[]> {
    return (await this.listed(instanceId)).map((r) => {
      const jwk = r.publicJwk as Record<string, unknown>;
      return { kid: r.id, jwk, key: memo(this.publicKeys, r.id, () => createPublicKey({ key: jwk as never, format: "jwk" })), publishUntil: r.publishUntil };
    });
  }

  /** The key that signs now; undefined when none may (none made yet, or the newest one's time is up). */
  async signer(instanceId: string): Promise<SigningKey | undefined> {
    const current = (await this.rows(instanceId)).find((r) => r.useUntil.getTime() > this.clock.now() + SIGNING_GRACE_MS);
    if (!current) return undefined;
    return {
      kid: current.id,
      privateKey: memo(this.privateKeys, current.id, () => createPrivateKey(this.box.open(current.privateKey))),
      useUntil: current.useUntil,
    };
  }
}

function memo(keys: Map<string, KeyObject>, kid: string, make: () => KeyObject): KeyObject {
  let key = keys.get(kid);
  if (!key) {
    key = make();
    keys.set(kid, key);
  }
  return key;
}
