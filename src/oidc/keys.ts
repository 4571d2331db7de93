import { createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { signingKeyAdded } from "../command/events.js";
import type { SecretBox } from "../crypto/secrets.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import type { ProjectionCache } from "../query/cache.js";
import type { Database } from "../storage/database.js";
import { publicKeyOfJwk } from "./jwt.js";

export interface KeyLifetimes {
  /** How long a new key signs before the next one takes over. */
  signMs: number;
  /** The longest a token signed by a key stays valid: its public key is published that much longer. */
  maxTokenMs: number;
}

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

/** A key within this much of the end of its signing time is not chosen: the next one is made instead. */
const GRACE_MS = 60_000;

/**
 * RS256 signing keys per instance. The newest key signs until its time is up; a new one is then made on
 * demand (or by `rotate`), and every public key stays in the JWKS until the last token it signed expires.
 */
export class SigningKeys {
  constructor(
    private readonly es: EventStore,
    private readonly db: Database,
    private readonly cache: ProjectionCache,
    private readonly box: SecretBox,
    private readonly lifetimes: KeyLifetimes,
  ) {}

  private rows(instanceId: string) {
    return this.cache.get(`signing-keys:${instanceId}`, () => this.db.prisma.signingKey.findMany({ where: { instanceId }, orderBy: { createdAt: "desc" } }));
  }

  /** The keys still published, newest first, as the web key API lists them. */
  async listed(instanceId: string) {
    return (await this.rows(instanceId)).filter((r) => r.publishUntil.getTime() > Date.now());
  }

  /** The keys to publish: every key whose tokens may still be valid. */
  async published(instanceId: string): Promise<PublicKey[]> {
    const now = Date.now();
    return (await this.rows(instanceId))
      .filter((r) => r.publishUntil.getTime() > now)
      .map((r) => ({ kid: r.id, jwk: r.publicJwk as Record<string, unknown>, key: this.publicKeyOf(r.id, r.publicJwk as Record<string, unknown>), publishUntil: r.publishUntil }));
  }

  // A key never changes once made: each is parsed once, not on every token it verifies.
  private readonly publicKeys = new Map<string, KeyObject>();
  private publicKeyOf(kid: string, jwk: Record<string, unknown>): KeyObject {
    let key = this.publicKeys.get(kid);
    if (!key) {
      key = publicKeyOfJwk(jwk);
      this.publicKeys.set(kid, key);
    }
    return key;
  }

  async signer(instanceId: string): Promise<SigningKey> {
    const current = (await this.rows(instanceId)).find((r) => r.useUntil.getTime() > Date.now() + GRACE_MS);
    if (current) return { kid: current.id, privateKey: this.privateKeyOf(current.id, current.privateKey), useUntil: current.useUntil };
    await this.rotate(instanceId, false);
    return this.signer(instanceId);
  }

  private readonly privateKeys = new Map<string, KeyObject>();
  private privateKeyOf(kid: string, sealed: string): KeyObject {
    let key = this.privateKeys.get(kid);
    if (!key) {
      key = createPrivateKey(this.box.open(sealed));
      this.privateKeys.set(kid, key);
    }
    return key;
  }

  /**
   * Makes a new signing key. `force` false: only when no key can sign any more (two callers racing make one
   * key: the instance's key aggregate is locked and read again). `force` true: on demand, always.
   */
  async rotate(instanceId: string, force: boolean): Promise<string | undefined> {
    const kid = newId();
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const now = Date.now();
    const useUntil = new Date(now + this.lifetimes.signMs);
    const publishUntil = new Date(useUntil.getTime() + this.lifetimes.maxTokenMs);
    const jwk = { ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" };
    const { result } = await this.es.execute(async (w) => {
      await w.sequenceOf(instanceId, "signing_keys", instanceId);
      if (!force) {
        const usable = await w.tx.signingKey.findFirst({ where: { instanceId, useUntil: { gt: new Date(Date.now() + GRACE_MS) } } });
        if (usable) return undefined;
      }
      // The key that signed until now stops signing; its public key stays published for its tokens.
      await w.push(instanceId, "SYSTEM", [
        signingKeyAdded.event(
          { aggregateId: instanceId, resourceOwner: instanceId },
          {
            kid,
            algorithm: "RS256",
            privateKey: this.box.seal(privateKey.export({ type: "pkcs8", format: "pem" }) as string),
            publicJwk: jwk,
            useUntil: useUntil.toISOString(),
            publishUntil: publishUntil.toISOString(),
          },
        ),
      ]);
      return kid;
    });
    return result;
  }
}

export function registerSigningKeyReducers(es: EventStore): void {
  es.on(signingKeyAdded, async (tx, e) => {
    const p = e.payload;
    // A newer key ends the signing time of the older ones (their public keys stay published).
    await tx.signingKey.updateMany({ where: { instanceId: e.instanceId, useUntil: { gt: e.createdAt } }, data: { useUntil: e.createdAt } });
    await tx.signingKey.create({
      data: {
        id: p.kid,
        instanceId: e.instanceId,
        algorithm: p.algorithm,
        privateKey: p.privateKey,
        publicJwk: p.publicJwk,
        useUntil: new Date(p.useUntil),
        publishUntil: new Date(p.publishUntil),
        createdAt: e.createdAt,
      },
    });
  });
}
