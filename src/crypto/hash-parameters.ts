/**
 * The parameters of the password hash forms `verifyPassword` understands, and the limits on them.
 *
 * An imported or administrator-set hash chooses its own cost, and every login attempt for its user, anonymous
 * ones included, pays that cost once. The limits keep one verification near a second at most on the
 * deployment's two cores (the CPU time of the worst case at each limit is in docs/drafts/poison-hashes.md):
 * without them a single hash could take minutes and gigabytes per attempt.
 */
export const HASH_LIMITS = {
  /** 2^13 rounds: 0.39 s measured (hash-wasm). */
  bcryptCost: 13,
  /** 64 MiB, 4 passes: 0.30 s measured (hash-wasm). */
  argon2MemoryKiB: 64 * 1024,
  argon2Iterations: 4,
  /** Lanes run one after the other in WebAssembly: p does not change the time (measured), only how memory is split. */
  argon2Parallelism: 16,
  /** N·r·p = 2^20: 0.16-0.30 s measured; what binds is memory, 128·N·r bytes = 128 MiB at p = 1, on each libuv thread. */
  scryptLogWork: 20,
  scryptBlockSize: 16,
  scryptParallelism: 16,
  /** Iterations × digest blocks of the derived key, SHA-1/224/256: 0.77-0.83 s measured at the limit. */
  pbkdf2BlockRoundsSha256: 5_000_000,
  /** SHA-384/512 iterations cost twice as much: 0.91 s measured at the limit. */
  pbkdf2BlockRoundsSha512: 2_500_000,
} as const;

export type ParsedHash =
  | { form: "scrypt"; logN: number; r: number; p: number; salt: Buffer; key: Buffer }
  | { form: "pbkdf2"; name: string; digest: Pbkdf2Digest | undefined; rounds: number; salt: Buffer; key: Buffer }
  /** `encoded` normalised to `$2b$`: `$2a$`, `$2b$` and `$2y$` differ only in how old implementations handled 8-bit characters. */
  | { form: "bcrypt"; cost: number; encoded: string }
  | { form: "argon2"; memoryKiB: number; iterations: number; parallelism: number; encoded: string }
  | { form: "argon2"; encoded: string; memoryKiB?: undefined };

type Pbkdf2Digest = "sha1" | "sha224" | "sha256" | "sha384" | "sha512";
const PBKDF2_DIGESTS: Record<string, Pbkdf2Digest> = {
  pbkdf2: "sha1",
  "pbkdf2-sha1": "sha1",
  "pbkdf2-sha224": "sha224",
  "pbkdf2-sha256": "sha256",
  "pbkdf2-sha384": "sha384",
  "pbkdf2-sha512": "sha512",
};
const DIGEST_BYTES: Record<Pbkdf2Digest, number> = { sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64 };

/** Standard base64 and passlib's "adapted base64" (`.` for `+`, no padding) alike. */
const b64 = (s: string) => Buffer.from(s.replace(/\./g, "+"), "base64");

/** The hash's form and parameters, or undefined when it is none of the supported forms. */
export function parseHash(encoded: string): ParsedHash | undefined {
  let m = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([^$]+)\$([^$]+)$/.exec(encoded);
  if (m) return { form: "scrypt", logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]), salt: b64(m[4]!), key: b64(m[5]!) };
  m = /^\$(pbkdf2(?:-sha\d{1,3})?)\$(\d{1,8})\$([^$]+)\$([^$]+)$/.exec(encoded);
  if (m) return { form: "pbkdf2", name: m[1]!, digest: PBKDF2_DIGESTS[m[1]!], rounds: Number(m[2]), salt: b64(m[3]!), key: b64(m[4]!) };
  m = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/.exec(encoded);
  if (m) return { form: "bcrypt", cost: Number(m[1]), encoded: encoded.replace(/^\$2[ay]\$/, "$2b$") };
  if (!/^\$argon2(id|i|d)\$/.test(encoded)) return undefined;
  m = /\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(encoded);
  return m ? { form: "argon2", memoryKiB: Number(m[1]), iterations: Number(m[2]), parallelism: Number(m[3]), encoded } : { form: "argon2", encoded };
}

export interface ParameterProblem {
  /** True when the hash is well-formed but would cost more than the limits allow; false when it can never verify. */
  overLimit: boolean;
  message: string;
}

const over = (message: string): ParameterProblem => ({ overLimit: true, message: `${message} (one verification must stay near a second)` });
const invalid = (message: string): ParameterProblem => ({ overLimit: false, message });

/** Why a parsed hash may not be verified, or undefined when it may. */
export function parameterProblem(h: ParsedHash): ParameterProblem | undefined {
  const L = HASH_LIMITS;
  switch (h.form) {
    case "scrypt": {
      if (h.logN < 1 || h.r < 1 || h.p < 1) return invalid("scrypt ln, r and p must be at least 1");
      if (h.r > L.scryptBlockSize) return over(`scrypt r=${h.r} is over the limit of ${L.scryptBlockSize}`);
      if (h.p > L.scryptParallelism) return over(`scrypt p=${h.p} is over the limit of ${L.scryptParallelism}`);
      const logWork = h.logN + Math.log2(h.r * h.p);
      if (logWork > L.scryptLogWork) {
        return over(`scrypt N·r·p = 2^${h.logN}·${h.r}·${h.p} ≈ 2^${logWork.toFixed(1)} is over the limit of 2^${L.scryptLogWork}`);
      }
      // RFC 7914 §2 (and OpenSSL) need N < 2^(128·r/8).
      if (h.logN >= 16 * h.r) return invalid(`scrypt needs N < 2^(16·r): ln=${h.logN} is too large for r=${h.r}`);
      return undefined;
    }
    case "pbkdf2": {
      if (!h.digest) return invalid(`${h.name} is not a supported digest (sha1, sha224, sha256, sha384, sha512)`);
      // Fewer rounds are not a password hash (ZITADEL's lower bound).
      if (h.rounds < 1000) return invalid(`pbkdf2 rounds must be at least 1000, not ${h.rounds}`);
      if (h.key.length === 0 || h.key.length > 128) return invalid("pbkdf2 hash must be 1 to 128 bytes");
      // Each digest-sized block of the derived key runs all rounds again.
      const blocks = Math.ceil(h.key.length / DIGEST_BYTES[h.digest]);
      const limit = h.digest === "sha384" || h.digest === "sha512" ? L.pbkdf2BlockRoundsSha512 : L.pbkdf2BlockRoundsSha256;
      if (h.rounds * blocks > limit) {
        const perBlock = blocks > 1 ? ` (a ${h.key.length}-byte ${h.digest} hash is ${blocks} blocks: rounds × blocks at most ${limit})` : "";
        return over(`${h.name} rounds ${h.rounds} are over the limit of ${Math.floor(limit / blocks)}${perBlock}`);
      }
      return undefined;
    }
    case "bcrypt":
      if (h.cost < 4) return invalid(`bcrypt cost must be at least 4, not ${h.cost}`);
      if (h.cost > L.bcryptCost) return over(`bcrypt cost ${h.cost} is over the limit of ${L.bcryptCost}`);
      return undefined;
    case "argon2":
      if (h.memoryKiB === undefined) return invalid("argon2 hash has no m=,t=,p= parameters");
      if (h.memoryKiB > L.argon2MemoryKiB) return over(`argon2 m=${h.memoryKiB} KiB is over the limit of ${L.argon2MemoryKiB} (64 MiB)`);
      if (h.iterations > L.argon2Iterations) return over(`argon2 t=${h.iterations} is over the limit of ${L.argon2Iterations}`);
      if (h.parallelism > L.argon2Parallelism) return over(`argon2 p=${h.parallelism} is over the limit of ${L.argon2Parallelism}`);
      return undefined;
  }
}

/** For import and API checks: why an encoded hash (of a supported form) would not be verified at login. */
export function hashParameterProblem(encoded: string): string | undefined {
  const parsed = parseHash(encoded);
  return parsed ? parameterProblem(parsed)?.message : undefined;
}
