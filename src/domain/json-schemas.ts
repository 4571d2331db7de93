import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/**
 * JSON Schemas of user schemas (draft 2020-12, with the standard formats), compiled with Ajv. No schema is ever
 * fetched: a `$ref` must resolve within the schema itself, else the schema is refused. Compiled validators are
 * kept per schema ID and revision (a revision never changes, so an entry never goes stale).
 */
export const MAX_SCHEMA_BYTES = 64 * 1024;

const ajv = new Ajv2020({ allErrors: false, strict: false, validateSchema: true, addUsedSchema: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 500;

/** What is wrong with `schema` as a JSON Schema, or undefined. */
export function schemaProblem(schema: unknown): string | undefined {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return "must be a JSON object";
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) return `must be at most ${MAX_SCHEMA_BYTES / 1024} KiB`;
  try {
    ajv.compile(schema as object);
    return undefined;
  } catch (e) {
    return (e as Error).message.slice(0, 300);
  }
}

/** Where `data` breaks the schema (a JSON path such as `.address.city`, and Ajv's message), or undefined when it conforms. */
export function dataProblem(key: string, schema: object, data: unknown): { path: string; message: string } | undefined {
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  if (validate(data)) return undefined;
  const e = validate.errors?.[0];
  const missing = e?.keyword === "required" ? `/${String((e.params as { missingProperty?: string }).missingProperty)}` : "";
  return { path: `${e?.instancePath ?? ""}${missing}`.replace(/\//g, "."), message: e?.message ?? "does not match the schema" };
}
