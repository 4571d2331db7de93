import { Secret, TOTP } from "otpauth";

const PERIOD_MS = 30_000;

/** An authenticator app's code for a TOTP secret (base32), now or `offsetMs` from now: SHA-1, 6 digits, 30 s, as the server enrols. */
export const totpCode = (secret: string, offsetMs = 0) =>
  new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offsetMs });

/**
 * A code the server refuses: none of the codes from two periods before to two after (it accepts the previous
 * and the next period's too, and a period may turn while the test runs). Comparing with the current code only
 * failed one run in ~60,000.
 */
export function wrongTotpCode(secret: string): string {
  const near = [-2, -1, 0, 1, 2].map((k) => totpCode(secret, k * PERIOD_MS));
  return ["000000", "111111", "222222", "333333", "444444", "555555"].find((c) => !near.includes(c))!;
}

/**
 * Waits for the next period when fewer than `marginMs` remain of this one, so that a code computed now for a
 * neighbouring period is still within the server's window when the request arrives under load.
 */
export async function awayFromPeriodEnd(marginMs = 10_000): Promise<void> {
  const left = PERIOD_MS - (Date.now() % PERIOD_MS);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

/**
 * A code the server accepts and has not seen yet: an accepted code is used up (RFC 6238 §5.2), so sign-ins
 * within one period need the next period's code, and a third waits for the period to turn. Only the current
 * and the next period's codes are given out: both stay within the server's window if a period turns meanwhile.
 * `used` holds the periods given out before (this helper adds to it).
 */
export async function unusedTotpCode(secret: string, used: Set<number>): Promise<string> {
  for (;;) {
    const now = Date.now();
    const step = Math.floor(now / PERIOD_MS);
    const free = [step, step + 1].find((s) => !used.has(s));
    if (free !== undefined) {
      used.add(free);
      return totpCode(secret, (free - step) * PERIOD_MS);
    }
    await new Promise((r) => setTimeout(r, (step + 1) * PERIOD_MS - now + 50));
  }
}
