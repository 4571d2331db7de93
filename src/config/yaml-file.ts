import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import { ConfigError } from "./startup-error.js";
import { closestVariable, variable } from "./variables.js";

/** Variables read from the file, and where each came from (for error messages). */
export interface YamlSettings {
  values: Record<string, string>;
  /** variable name -> "svc.port in config.yaml" */
  origins: Record<string, string>;
}

/**
 * Reads the file given with `--config`. Keys map to variable names by one rule: the path of nested keys
 * joined with "_", camelCase and kebab-case split into words, upper-cased. So `SVC_PORT: 8080`,
 * `svc: {port: 8080}`, `svc: {external: {domain: x}}` (SVC_EXTERNAL_DOMAIN), `svc: {oidc: {accessTokenLifetime: 60}}`
 * and `database: {url: ...}` (DATABASE_URL) all work. Every key must map to a known variable: a typo must
 * not be silently ignored (that is the point of a strict file; the environment stays lenient).
 */
export function readYamlFile(path: string): YamlSettings {
  const where = `--config ${path}`;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "is a directory, not a file"
          : code === "EACCES"
            ? "permission denied"
            : `cannot read it (${code ?? (err as Error).message})`;
    throw new ConfigError(`${where}: ${why}`);
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    // yaml's messages continue with a code frame on further lines; the first line names the place
    const first = doc.errors[0]!.message.split("\n")[0]!.replace(/:$/, "");
    throw new ConfigError(`${where}: not valid YAML: ${first}`);
  }
  const root: unknown = doc.toJS();
  const out: YamlSettings = { values: {}, origins: {} };
  if (root === null || root === undefined) return out; // an empty file sets nothing
  if (!isMapping(root)) throw new ConfigError(`${where}: the top level must be a mapping of keys to values, e.g. "svc: {port: 8080}"`);
  walk(root, [], out, where, path);
  return out;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `accessTokenLifetime` -> ACCESS_TOKEN_LIFETIME, `refresh-token` -> REFRESH_TOKEN. */
function segment(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[-.\s]+/g, "_")
    .toUpperCase();
}

function walk(node: Record<string, unknown>, path: string[], out: YamlSettings, where: string, file: string): void {
  for (const [key, value] of Object.entries(node)) {
    const keyPath = [...path, key];
    if (isMapping(value)) {
      walk(value, keyPath, out, where, file);
      continue;
    }
    const shown = keyPath.join(".");
    const name = keyPath.map(segment).join("_");
    if (!variable(name)) {
      const near = closestVariable(name);
      const read = name === shown ? "" : ` (read as ${name})`;
      // suggest in the style the file uses: nested keys get a nested spelling that maps to the variable
      const spelled = near && keyPath.length > 1 ? `${near} (${near.toLowerCase().replace("_", ".")})` : near;
      throw new ConfigError(`${where}: unknown key "${shown}"${read}${near ? `; did you mean ${spelled}?` : "; see --help for the variables"}`);
    }
    if (out.origins[name]) throw new ConfigError(`${where}: ${name} is set twice, by "${out.origins[name]!.split(" in ")[0]}" and "${shown}"`);
    const text = scalar(value, name, shown, where);
    if (text === undefined) continue; // `key:` with no value leaves the variable unset
    out.values[name] = text;
    out.origins[name] = `${shown} in ${file}`;
  }
}

function scalar(value: unknown, name: string, shown: string, where: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  // a list is accepted where the variable is a comma-separated list (SVC_CORS_ORIGINS)
  if (Array.isArray(value) && value.every((v) => typeof v === "string" || typeof v === "number")) return value.join(",");
  throw new ConfigError(`${where}: "${shown}" (${name}) must be a single value`);
}
