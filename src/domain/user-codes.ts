/** The codes sent to users (src/command/user-codes.ts decides, the user_codes projection keeps the pending one). */

export type CodeKind = "email" | "phone" | "password" | "unlock" | "otp_email" | "otp_sms";

/**
 * Wrong tries a code takes before it is spent: a six-digit code then falls to guessing once in 200,000 codes
 * sent, however fast the guesses come (each code is sent to the user, which a guesser cannot repeat unnoticed).
 */
export const MAX_CODE_FAILURES = 5;
