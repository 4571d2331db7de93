import { generateKeyPairSync } from "node:crypto";
import type { SecretBox } from "../crypto/secrets.js";
import type { EventStore } from "../eventstore/eventstore.js";
import { newId } from "../ids.js";
import { SIGNING_GRACE_MS } from "../query/signing-keys.js";
import { signingKeyAdded } from "../events/index.js";
import { SYSTEM_CREATOR } from "../domain/system.js";

/** How keys are made: sealed with the master key, signing for `signMs`, published `maxTokenMs` longer. */
export interface SigningKeyPolicy {
  box: SecretBox;
  /** How long a new key signs before the next one takes over. */
  signMs: number;
  /** The longest a token signed by a key stays valid: its public key is published that much longer. */
  maxTokenMs: number;
}

/**
 * Makes the instance's first key, or the next one when the current one's signing time is up. There is no
 * timer: a key is due when someone needs one (a token, the JWKS), and the instance may be served by several
 * processes; two callers racing make one key (the instance's key aggregate is locked and read again).
 * Returns the new key's ID, or undefined when a key can still sign.
 */
export function ensureSigningKey(es: EventStore, policy: SigningKeyPolicy, instanceId: string): Promise<string | undefined> {
  return addSigningKey(es, policy, instanceId, false);
}

/** A new signing key on demand (the web key API), whether or not the current one may still sign. */
export async function rotateSigningKey(es: EventStore, policy: SigningKeyPolicy, instanceId: string): Promise<string> {
  return (await addSigningKey(es, policy, instanceId, true))!;
}

async function addSigningKey(es: EventStore, policy: SigningKeyPolicy, instanceId: string, force: boolean): Promise<string | undefined> {
  const kid = newId();
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const now = es.clock.now();
  const useUntil = new Date(now + policy.signMs);
  const publishUntil = new Date(useUntil.getTime() + policy.maxTokenMs);
  const jwk = { ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" };
  const { result } = await es.execute(async (w) => {
    await w.lock(instanceId, "signing_keys", instanceId);
    if (!force) {
      const usable = await w.tx.signingKey.findFirst({ where: { instanceId, useUntil: { gt: new Date(w.clock.now() + SIGNING_GRACE_MS) } } });
      if (usable) return undefined;
    }
    // The key that signed until now stops signing; its public key stays published for its tokens.
    await w.push(instanceId, SYSTEM_CREATOR, [
      signingKeyAdded.event(
        { aggregateId: instanceId, resourceOwner: instanceId },
        {
          kid,
          algorithm: "RS256",
          privateKey: policy.box.seal(privateKey.export({ type: "pkcs8", format: "pem" }) as string),
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
