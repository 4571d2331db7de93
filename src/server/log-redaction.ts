/**
 * Query parameters whose values are secrets (security review #15): mailed codes (still valid after the logged
 * GET), tokens, ID tokens, the login UI's pending sign-in and form secrets, the client's state. The one list the
 * log redacts.
 */
const SECRET_QUERY_PARAMETERS = ["code", "code_verifier", "id_token_hint", "login_hint", "session", "sessionId", "token", "access_token"]
  .concat(["refresh_token", "subject_token", "actor_token", "client_secret", "client_assertion", "assertion", "password"])
  .concat(["newPassword", "confirmPassword", "pending", "csrf", "credential", "state"]);
const secretNames = `(?:${SECRET_QUERY_PARAMETERS.join("|")})`;
/** A secret parameter's value in a URL, up to the next parameter, space or quote (JSON escapes a quote with `\`). */
const SECRET_IN_QUERY = new RegExp(`([?&]${secretNames}=)[^&#\\s"\\\\]*`, "gi");
/** The same in a URL that a parameter carries, percent-encoded once or more (`return_to=%2Fcb%3Fcode%3D...`). */
const SECRET_IN_NESTED_QUERY = new RegExp(`(%(?:25)*(?:3F|26)${secretNames}%(?:25)*3D)(?:(?!%(?:25)*26)[^&#\\s"\\\\])*`, "gi");

/**
 * A log line as written: each secret parameter's value is `[redacted]` wherever a URL appears in it (the request
 * line, Fastify's "Route ... not found" and errors that quote the URL), the path and the other parameters stay.
 */
export function withoutSecrets(line: string): string {
  return line.replace(SECRET_IN_QUERY, "$1[redacted]").replace(SECRET_IN_NESTED_QUERY, "$1[redacted]");
}
