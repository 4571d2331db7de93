import { Algorithm, hash as argon2Hash } from "@node-rs/argon2";
import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { DEFAULT_PASSWORD_HASH_COST, hashPassword, isSupportedHash, setPasswordHashCost, verifyPassword } from "../../src/crypto/password.js";

const PASSWORD = "correct horse";

// Hashes made by other implementations (Python's hashlib in the passlib and Keycloak spellings, bcryptjs,
// the Rust argon2 crate), so that the formats are proven, not only our own round trip.
const fixed: Record<string, string> = {
  "passlib documentation example ($pbkdf2-sha256$, password 'password')":
    "$pbkdf2-sha256$6400$0ZrzXitFSGltTQnBWOsdAw$Y11AchqV4b0sUisdZd0Xr97KWoymNE0LNNrnEgY4H9M",
  "$pbkdf2$ (sha1), standard base64 as Keycloak exports": "$pbkdf2$27500$AAECAwQFBgcICQoLDA0ODw==$nHWIZA5Y/y/XNlKwqeOMhezm/j6UdlqJVSl4l5Av0Uw=",
  "$pbkdf2$ (sha1), passlib's adapted base64": "$pbkdf2$27500$AAECAwQFBgcICQoLDA0ODw$nHWIZA5Y/y/XNlKwqeOMhezm/j6UdlqJVSl4l5Av0Uw",
  "$pbkdf2-sha256$, standard base64": "$pbkdf2-sha256$27500$AAECAwQFBgcICQoLDA0ODw==$qnA427fe69fAjkevcHZvnm7vp3MewnxKL4g2WLfI7U4=",
  "$pbkdf2-sha512$, standard base64":
    "$pbkdf2-sha512$27500$AAECAwQFBgcICQoLDA0ODw==$strOfPbEJlYxI+pDQ6puu2pum8jkqjEdmZWvpgb5xVfLmEDywC36KsFF4CvndJLLHalxszQJNyfuktxXUzFXIQ==",
  "$pbkdf2-sha512$, passlib's adapted base64":
    "$pbkdf2-sha512$27500$AAECAwQFBgcICQoLDA0ODw$strOfPbEJlYxI.pDQ6puu2pum8jkqjEdmZWvpgb5xVfLmEDywC36KsFF4CvndJLLHalxszQJNyfuktxXUzFXIQ",
  "$scrypt$ (passlib form, ln=14)": "$scrypt$ln=14,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$1idRgu6ns74sljt005o5BblTKV7Jul0HPGT6aXWnXKY",
};

async function generated(): Promise<Record<string, string>> {
  const b = bcrypt.hashSync(PASSWORD, 8);
  return {
    "$2a$ bcrypt": b.replace(/^\$2b\$/, "$2a$"),
    "$2b$ bcrypt": b,
    "$2y$ bcrypt (PHP)": b.replace(/^\$2b\$/, "$2y$"),
    $argon2id$: await argon2Hash(PASSWORD, { algorithm: Algorithm.Argon2id, memoryCost: 4096, timeCost: 2 }),
    $argon2i$: await argon2Hash(PASSWORD, { algorithm: Algorithm.Argon2i, memoryCost: 4096, timeCost: 2 }),
  };
}

describe("imported password hashes", () => {
  it("each supported form verifies with its password, fails with a wrong one, and asks for a rehash", async () => {
    const all = { ...fixed, ...(await generated()) };
    for (const [form, encoded] of Object.entries(all)) {
      const password = form.includes("password 'password'") ? "password" : PASSWORD;
      expect(isSupportedHash(encoded), form).toBe(true);
      expect(await verifyPassword(password, encoded), form).toEqual({ valid: true, rehash: true });
      expect(await verifyPassword(`${password}!`, encoded), form).toEqual({ valid: false, rehash: false });
    }
  });

  it("new hashes are the scrypt default, salted, and need no rehash", async () => {
    // the built-in cost (the suite's servers set a low one for this process)
    setPasswordHashCost(DEFAULT_PASSWORD_HASH_COST);
    const a = await hashPassword(PASSWORD);
    const b = await hashPassword(PASSWORD);
    expect(a).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword(PASSWORD, a)).toEqual({ valid: true, rehash: false });
    expect(await verifyPassword("wrong", a)).toEqual({ valid: false, rehash: false });
  });

  it("SVC_PASSWORD_HASH_COST sets the cost of new hashes; a hash of another cost is rehashed at its next sign-in", async () => {
    setPasswordHashCost(12);
    try {
      const cheap = await hashPassword(PASSWORD);
      expect(cheap).toMatch(/^\$scrypt\$ln=12,r=8,p=1\$/);
      expect(await verifyPassword(PASSWORD, cheap)).toEqual({ valid: true, rehash: false });
      setPasswordHashCost(DEFAULT_PASSWORD_HASH_COST);
      expect(await verifyPassword(PASSWORD, cheap)).toEqual({ valid: true, rehash: true });
    } finally {
      setPasswordHashCost(DEFAULT_PASSWORD_HASH_COST);
    }
  });

  it("unknown, malformed or abusive hashes never verify and never throw", async () => {
    for (const encoded of [
      "",
      "plain",
      "$md5$abc",
      "$pbkdf2-sha256$999$AAEC$AAEC", // too few rounds
      "$pbkdf2-sha256$99999999$AAEC$AAEC", // too many
      "$pbkdf2-sha999$27500$AAEC$AAEC",
      `$2b$31$${"a".repeat(53)}`,
      "$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$aGFzaA",
      "$scrypt$ln=30,r=8,p=1$c2FsdA$aGFzaA",
      "$pbkdf2-sha256$27500$$",
    ]) {
      expect(await verifyPassword(PASSWORD, encoded), encoded).toEqual({ valid: false, rehash: false });
    }
  });
});
