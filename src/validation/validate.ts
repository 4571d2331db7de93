import { getOption, hasOption, isMessage, ScalarType, type DescField, type DescMessage, type DescOneof, type Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { Interceptor } from "@connectrpc/connect";
import { field as fieldExt, required as requiredExt, type FieldRules } from "../../gen/svc/options/v1/options_pb.js";
import { isIssuerPath } from "../domain/applications.js";
import { errors } from "../errors/errors.js";

/**
 * Validation declared in the protos (svc.options.v1 field and oneof options), enforced for every protocol
 * by one interceptor. Each message type is compiled once into a list of checks.
 */
type Check = (msg: ReflectMessage, path: string) => string | undefined;

const compiled = new Map<DescMessage, Check[]>();

function rulesOf(f: DescField): FieldRules | undefined {
  return hasOption(f, fieldExt) ? getOption(f, fieldExt) : undefined;
}

function isUri(value: string): boolean {
  // An absolute URI: a scheme, then something. URL() accepts what RFC 3986 calls absolute URIs.
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value) || /\s/.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

function stringChecks(r: FieldRules): ((v: string) => string | undefined)[] {
  const checks: ((v: string) => string | undefined)[] = [];
  if (r.minLen !== undefined) {
    const min = r.minLen;
    checks.push((v) => ([...v].length < min ? `must be at least ${min} characters long` : undefined));
  }
  if (r.maxLen !== undefined) {
    const max = r.maxLen;
    checks.push((v) => ([...v].length > max ? `must be at most ${max} characters long` : undefined));
  }
  if (r.uri && r.orPath) checks.push((v) => (isUri(v) || isIssuerPath(v) ? undefined : "must be a URI or a path beginning with /"));
  else if (r.uri) checks.push((v) => (isUri(v) ? undefined : "must be a URI"));
  if (r.pattern) {
    const re = new RegExp(r.pattern);
    checks.push((v) => (re.test(v) ? undefined : `must match the pattern ${r.pattern}`));
  }
  return checks;
}

// PostgreSQL's text type cannot hold U+0000, and no identifier, name or URI needs it: every string of every
// request is checked, with or without rules, before it can reach a query.
const NUL = "\u0000";
const noNul = "must not contain NUL characters";

/** The NUL check of a string, list of strings or map with string keys or values; undefined for other fields. */
function nulCheck(f: DescField): Check | undefined {
  const name = f.name;
  if (f.fieldKind === "scalar" && f.scalar === ScalarType.STRING) return (m, p) => ((m.get(f) as string).includes(NUL) ? `${p}${name}: ${noNul}` : undefined);
  if (f.fieldKind === "list" && f.listKind === "scalar" && f.scalar === ScalarType.STRING)
    return (m, p) => {
      let i = 0;
      for (const v of m.get(f) as Iterable<string>) {
        if (v.includes(NUL)) return `${p}${name}[${i}]: ${noNul}`;
        i++;
      }
      return undefined;
    };
  if (f.fieldKind !== "map") return undefined;
  const keys = f.mapKey === ScalarType.STRING;
  const values = f.mapKind === "scalar" && f.scalar === ScalarType.STRING;
  if (!keys && !values) return undefined;
  return (m, p) => {
    for (const [k, v] of m.get(f) as Iterable<[unknown, unknown]>) {
      // The key itself is not repeated in the message: it is the offending text.
      if (keys && (k as string).includes(NUL)) return `${p}${name}: keys ${noNul}`;
      if (values && (v as string).includes(NUL)) return `${p}${name}[${String(k)}]: ${noNul}`;
    }
    return undefined;
  };
}

function fieldCheck(f: DescField): Check | undefined {
  const r = rulesOf(f);
  const nested = f.message ?? undefined;
  const nul = nulCheck(f);
  // First, so that a NUL is reported as such rather than as a pattern or URI mismatch.
  const checks: Check[] = nul ? [nul] : [];
  const name = f.name;
  if (f.fieldKind === "list") {
    if (r?.maxItems !== undefined) {
      const max = r.maxItems;
      checks.push((m, p) => (m.get(f).size > max ? `${p}${name}: must have at most ${max} items` : undefined));
    }
    const list = f;
    if (list.listKind === "scalar" && list.scalar === ScalarType.STRING && r) {
      const sc = stringChecks(r);
      if (sc.length)
        checks.push((m, p) => {
          let i = 0;
          for (const v of m.get(list) as Iterable<string>) {
            for (const c of sc) {
              const e = c(v);
              if (e) return `${p}${name}[${i}]: ${e}`;
            }
            i++;
          }
          return undefined;
        });
    }
    if (list.listKind === "message") {
      checks.push((m, p) => {
        let i = 0;
        for (const item of m.get(list) as Iterable<ReflectMessage>) {
          const e = validateReflect(item, `${p}${name}[${i}].`);
          if (e) return e;
          i++;
        }
        return undefined;
      });
    }
    if (list.listKind === "enum" && r?.definedOnly) {
      const values = new Set(list.enum.values.map((v) => v.number));
      checks.push((m, p) => {
        for (const v of m.get(list) as Iterable<number>) if (!values.has(v)) return `${p}${name}: ${v} is not a defined value of ${list.enum.typeName}`;
        return undefined;
      });
    }
  } else if (f.fieldKind === "scalar") {
    if (f.scalar === ScalarType.STRING && r) {
      const sc = stringChecks(r);
      const requiredStr = r.required;
      checks.push((m, p) => {
        // Unset optional and oneof members are not checked; implicit-presence strings always are,
        // except that an empty value only fails when the field is required or has a minimum length.
        if (!m.isSet(f) && (f.oneof || f.proto.proto3Optional)) return undefined;
        const v = m.get(f) as string;
        if (requiredStr && v === "") return `${p}${name}: is required`;
        if (v === "" && !requiredStr && r.minLen === undefined && f.oneof === undefined && !f.proto.proto3Optional) return undefined;
        for (const c of sc) {
          const e = c(v);
          if (e) return `${p}${name}: ${e}`;
        }
        return undefined;
      });
    }
    if (f.scalar === ScalarType.BOOL && r?.constTrue) {
      checks.push((m, p) => (m.isSet(f) && m.get(f) !== true ? `${p}${name}: must be true when set` : undefined));
    }
    if (r?.lte !== undefined) {
      const lte = r.lte;
      checks.push((m, p) => {
        const v = BigInt(m.get(f) as number | bigint);
        return v > lte ? `${p}${name}: must be at most ${lte}` : undefined;
      });
    }
  } else if (f.fieldKind === "enum") {
    if (r?.definedOnly) {
      const values = new Set(f.enum.values.map((v) => v.number));
      checks.push((m, p) => (values.has(m.get(f) as number) ? undefined : `${p}${name}: ${m.get(f)} is not a defined value of ${f.enum.typeName}`));
    }
    if (r?.required) checks.push((m, p) => ((m.get(f) as number) === 0 ? `${p}${name}: is required` : undefined));
  } else if (f.fieldKind === "message" && nested) {
    if (r?.required) checks.push((m, p) => (m.isSet(f) ? undefined : `${p}${name}: is required`));
    checks.push((m, p) => (m.isSet(f) ? validateReflect(m.get(f) as ReflectMessage, `${p}${name}.`) : undefined));
  } else if (f.fieldKind === "map" && f.mapKind === "message") {
    checks.push((m, p) => {
      for (const [k, v] of m.get(f) as Iterable<[unknown, ReflectMessage]>) {
        const e = validateReflect(v, `${p}${name}[${String(k)}].`);
        if (e) return e;
      }
      return undefined;
    });
  }
  if (!checks.length) return undefined;
  return (m, p) => {
    for (const c of checks) {
      const e = c(m, p);
      if (e) return e;
    }
    return undefined;
  };
}

function oneofCheck(o: DescOneof): Check | undefined {
  if (!hasOption(o, requiredExt) || !getOption(o, requiredExt)) return undefined;
  const names = o.fields.map((f) => f.name).join(", ");
  return (m, p) => (m.oneofCase(o) ? undefined : `${p}${o.name}: exactly one of ${names} is required`);
}

function compile(desc: DescMessage): Check[] {
  let checks = compiled.get(desc);
  if (!checks) {
    checks = [];
    // Registered before filling so that recursive message types terminate.
    compiled.set(desc, checks);
    for (const o of desc.oneofs) {
      const c = oneofCheck(o);
      if (c) checks.push(c);
    }
    for (const f of desc.fields) {
      const c = fieldCheck(f);
      if (c) checks.push(c);
    }
  }
  return checks;
}

function validateReflect(m: ReflectMessage, path: string): string | undefined {
  for (const c of compile(m.desc)) {
    const e = c(m, path);
    if (e) return e;
  }
  return undefined;
}

/** The first violation as "field.path: reason", or undefined. */
export function violation(desc: DescMessage, message: Message): string | undefined {
  if (!isMessage(message, desc)) return `${desc.typeName}: not a message of this type`;
  return validateReflect(reflect(desc, message), "");
}

export const validationInterceptor: Interceptor = (next) => async (req) => {
  if (!req.stream) {
    const v = violation(req.method.input, req.message);
    if (v) throw errors.invalidArgument("VALID-f1d3", `invalid ${v}`);
  }
  return next(req);
};
