/**
 * What of an event's payload may leave the server (to action targets, in the audit log): keys that name a
 * hash, secret, key, password, token or code are dropped at every depth. Sealed values are sealed, but a
 * sealed secret is still nobody's business outside.
 */
const SECRET_KEY = /hash|secret|signingkey|privatekey|password|token$|^code$/i;

export function redactPayload(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactPayload);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([k]) => !SECRET_KEY.test(k))
      .map(([k, v]) => [k, redactPayload(v)]),
  );
}
