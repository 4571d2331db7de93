import type { SecretBox } from "../crypto/secrets.js";
import { kindOfType } from "../domain/idps.js";
import type { IdpRow } from "../query/idps.js";
import type { StoredProvider } from "./provider.js";

/**
 * A provider's row as its protocol reads it: its kind, its configuration, its secret opened, and the key of its
 * version (what was discovered for it is kept under that key). Undefined for a type no kind has.
 */
export function storedProviderOf(row: IdpRow, box: SecretBox): StoredProvider | undefined {
  const kind = kindOfType(row.type);
  if (!kind) return undefined;
  return {
    id: row.id,
    kind,
    key: `${row.id}:${row.sequence}`,
    config: row.config as Record<string, unknown>,
    secret: row.secret ? box.open(row.secret) : undefined,
  };
}
