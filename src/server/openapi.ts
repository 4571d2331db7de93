import { ScalarType, type DescEnum, type DescField, type DescMessage, type DescService } from "@bufbuild/protobuf";
import { protoComments } from "../../gen/svc/proto_comments.js";
import { paths as oauthPaths } from "../oidc/context.js";
import { API_AUDIENCE } from "../oidc/scopes.js";
import { methodInfo, permissionIn, type MethodInfo } from "../schema/descriptors.js";
import { otherPaths, otherTags } from "./openapi-endpoints.js";
import { restRoutesOf } from "./rest-gateway.js";

/** One permission, or one per context the request acts in (the settings' `policy.write`). */
function permissionText(mi: MethodInfo): string {
  if (!mi.permissionPerContext) return `\`${mi.permission}\``;
  const contexts = ["system", "instance", "org"] as const;
  return contexts.map((c) => `\`${permissionIn(mi, c)}\` in the ${c === "org" ? "organization" : c} context`).join(", ");
}

type Schema = Record<string, unknown>;

/** The scopes an API caller's access token needs (the specification's authentication section). */
export const apiScopes = ["openid", `urn:svc:iam:org:project:id:${API_AUDIENCE}:aud`];

/**
 * The security schemes: the bearer token every call carries (a PAT or an access token), and the OAuth 2.0
 * authorization code flow of this server that gets such a token. `base` is the issuer the document is read
 * from; without one the URLs stay relative to the server (OpenAPI 3.0.3 §4.7.1: resolved against it).
 */
export function securitySchemes(base = "") {
  return {
    bearer: { type: "http", scheme: "bearer" },
    oauth2: {
      type: "oauth2",
      description: "The authorization code flow (with PKCE for public clients) of this server's OpenID Connect provider.",
      flows: {
        authorizationCode: {
          authorizationUrl: `${base}${oauthPaths.authorize}`,
          tokenUrl: `${base}${oauthPaths.token}`,
          scopes: {
            openid: "OpenID Connect: the user's identity",
            [apiScopes[1]!]: "puts this server's APIs into the access token's audience",
          },
        },
      },
    },
  };
}

const wellKnown: Record<string, Schema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time", example: "2025-01-31T12:00:00Z" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?s$", example: "10s" },
  "google.protobuf.Struct": { type: "object" },
  "google.protobuf.Value": {},
  "google.protobuf.Empty": { type: "object" },
};

/** The proto comment of a field: its own, else the one of its message or enum type (what the field holds). */
function fieldComment(f: DescField): string | undefined {
  const own = protoComments[`${f.parent.typeName}.${f.name}`];
  const type = f.message ? protoComments[f.message.typeName] : f.enum ? protoComments[f.enum.typeName] : undefined;
  const values = f.enum ? enumValuesText(f.enum) : "";
  const text = own ?? type;
  return text ? `${text}${values}` : values ? values.trim() : undefined;
}

/** The commented values of an enum as a Markdown list (empty when no value has a comment). */
function enumValuesText(e: DescEnum): string {
  const lines = e.values.filter((v) => protoComments[`${e.typeName}.${v.name}`]).map((v) => `- \`${v.name}\`: ${protoComments[`${e.typeName}.${v.name}`]}`);
  return lines.length ? `\n\n${lines.join("\n")}` : "";
}

/** A sample value of a string field, by what its name (and its message's: `Email.address`) says it holds. */
function sampleString(f: DescField): string {
  const [parent, name] = [f.parent.name.toLowerCase(), f.name];
  if (/email/.test(name) || (/email/.test(parent) && name === "address")) return "ada@example.com";
  if (/phone/.test(name) || (/phone/.test(parent) && name === "number")) return "+41791234567";
  if (/(^|_)(url|uri)s?$|redirect/.test(name)) return "https://app.example.com/callback";
  if (/domain/.test(name)) return "example.com";
  if (/language|locale/.test(name)) return "en";
  if (/(^|_)ids?$/.test(name)) return "312909075212468632";
  return "string";
}

/**
 * A request body example from a message's schema: every field once with a sample value, but only the first
 * member of each oneof (proto3 JSON refuses two), and a message inside itself once.
 */
export function exampleOf(m: DescMessage, seen: ReadonlySet<string> = new Set()): unknown {
  const wk = wellKnown[m.typeName];
  if (wk) return wk.example ?? (wk.type === "object" ? {} : null);
  if (seen.has(m.typeName) || seen.size > 6) return {};
  const inner = new Set([...seen, m.typeName]);
  const out: Record<string, unknown> = {};
  const oneofsTaken = new Set<string>();
  for (const f of m.fields) {
    if (f.oneof) {
      if (oneofsTaken.has(f.oneof.name)) continue;
      oneofsTaken.add(f.oneof.name);
    }
    const one = fieldSample(f, inner);
    out[f.jsonName] = f.fieldKind === "list" ? [one] : one;
  }
  return out;
}

function fieldSample(f: DescField, seen: ReadonlySet<string>): unknown {
  const scalar = (t: ScalarType): unknown => {
    const s = scalarSchema(t);
    if (s.type === "boolean") return true;
    if (s.format === "byte") return "AAEC";
    if (s.format === "int64") return "10";
    if (s.type === "number" || s.type === "integer") return 10;
    return sampleString(f);
  };
  const enumSample = (e: DescEnum) => (e.values.find((v) => v.number !== 0) ?? e.values[0])?.name;
  switch (f.fieldKind) {
    case "scalar":
      return scalar(f.scalar);
    case "enum":
      return enumSample(f.enum);
    case "message":
      return exampleOf(f.message, seen);
    case "list":
      return f.listKind === "scalar" ? scalar(f.scalar) : f.listKind === "enum" ? enumSample(f.enum) : exampleOf(f.message, seen);
    case "map":
      return { key: f.mapKind === "scalar" ? scalar(f.scalar) : f.mapKind === "enum" ? enumSample(f.enum) : exampleOf(f.message, seen) };
  }
}

function scalarSchema(t: ScalarType): Schema {
  switch (t) {
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BYTES:
      return { type: "string", format: "byte" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return { type: "string", format: "int64" };
    default:
      return { type: "integer", format: "int32" };
  }
}

/** OpenAPI 3 for every REST route, derived from the same descriptors the gateway uses. */
export function buildOpenApi(services: DescService[], info: { title: string; version: string }) {
  const schemas: Record<string, Schema> = {};
  const ref = (m: DescMessage): Schema => {
    if (wellKnown[m.typeName]) return wellKnown[m.typeName]!;
    if (!schemas[m.typeName]) {
      schemas[m.typeName] = {};
      schemas[m.typeName] = messageSchema(m);
    }
    return { $ref: `#/components/schemas/${m.typeName}` };
  };
  const fieldSchema = (f: DescField): Schema => {
    const item = (): Schema => {
      if (f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar")) return scalarSchema(f.scalar!);
      if (f.fieldKind === "enum" || (f.fieldKind === "list" && f.listKind === "enum")) return { type: "string", enum: f.enum!.values.map((v) => v.name) };
      if (f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message")) return ref(f.message!);
      if (f.fieldKind === "map") {
        const v = f.mapKind === "message" ? ref(f.message) : f.mapKind === "enum" ? { type: "string" } : scalarSchema(f.scalar);
        return { type: "object", additionalProperties: v };
      }
      return {};
    };
    return f.fieldKind === "list" ? { type: "array", items: item() } : item();
  };
  /** A field's schema with its proto comment (beside a $ref only through allOf: OpenAPI 3.0 ignores $ref's siblings). */
  const describedField = (f: DescField): Schema => {
    const schema = fieldSchema(f);
    const description = fieldComment(f);
    if (!description) return schema;
    return schema.$ref ? { description, allOf: [schema] } : { ...schema, description };
  };
  const messageSchema = (m: DescMessage): Schema => ({
    type: "object",
    ...(protoComments[m.typeName] ? { description: protoComments[m.typeName] } : {}),
    properties: Object.fromEntries(m.fields.map((f) => [f.jsonName, describedField(f)])),
  });
  /** A parameter's description: the comment of the field it sets (a path like `user.id` walks the request). */
  const parameterComment = (m: DescMessage, path: string): string | undefined => {
    const [head, ...rest] = path.split(".");
    const f = m.fields.find((x) => x.name === head);
    if (!f) return undefined;
    if (rest.length === 0) return fieldComment(f);
    return f.message ? parameterComment(f.message, rest.join(".")) : undefined;
  };
  const withDescription = (p: Schema, description: string | undefined): Schema => (description ? { ...p, description } : p);
  const paths: Record<string, Record<string, unknown>> = {};
  const status = {
    type: "object",
    description: "The standard status object: code is the gRPC code number.",
    properties: {
      code: { type: "integer", description: "The gRPC status code number (3 INVALID_ARGUMENT, 5 NOT_FOUND, 7 PERMISSION_DENIED, 16 UNAUTHENTICATED, ...)." },
      message: { type: "string", description: "What went wrong, for people; this server's own errors end with their ID in parentheses (`(USER-d0mn)`)." },
      details: {
        type: "array",
        items: { type: "object" },
        description: "`google.rpc.Status` details as JSON (`@type` and the fields): a `google.rpc.ErrorInfo` with the error's ID as `reason`.",
      },
    },
  };
  for (const service of services) {
    for (const method of service.methods) {
      const mi = methodInfo(method);
      for (const route of restRoutesOf(method)) {
        const pathVars = new Set([...route.variables.values()].map((p) => p.join(".")));
        const parameters: Schema[] = [...pathVars].map((name) =>
          withDescription({ name, in: "path", required: true, schema: { type: "string" } }, parameterComment(method.input, name)),
        );
        const bodyField = route.body && route.body !== "*" ? method.input.fields.find((f) => f.name === route.body) : undefined;
        if (route.body !== "*") {
          for (const f of method.input.fields) {
            if (pathVars.has(f.name) || f === bodyField) continue;
            if (f.fieldKind === "message" && f.message.typeName === "svc.object.v3alpha.RequestContext") {
              for (const c of f.message.fields)
                parameters.push(withDescription({ name: `ctx.${c.name}`, in: "query", schema: fieldSchema(c) }, fieldComment(c)));
            } else if (f.fieldKind === "message" && !wellKnown[f.message.typeName]) {
              for (const c of f.message.fields)
                parameters.push(withDescription({ name: `${f.name}.${c.name}`, in: "query", schema: fieldSchema(c) }, fieldComment(c)));
            } else parameters.push(withDescription({ name: f.name, in: "query", schema: fieldSchema(f) }, fieldComment(f)));
          }
        }
        const body = route.body === "*" ? ref(method.input) : bodyField ? fieldSchema(bodyField) : undefined;
        const example = route.body === "*" ? exampleOf(method.input) : bodyField ? fieldSample(bodyField, new Set()) : undefined;
        const comment = protoComments[`${service.typeName}.${method.name}`];
        const op: Record<string, unknown> = {
          operationId: `${service.name}_${method.name}${route.verb === methodInfo(method).http?.pattern.case?.toUpperCase() ? "" : `_${route.verb}`}`,
          tags: [service.typeName],
          summary: method.name,
          description: [
            comment ? `${comment}\n\n` : "",
            mi.permission ? `Permission: ${permissionText(mi)}.` : "Public.",
            mi.feature ? `Requires the feature flag \`${mi.feature}\`.` : "",
            `Also served as gRPC, gRPC-web and Connect at \`/${service.typeName}/${method.name}\`.`,
          ]
            .filter(Boolean)
            .join(" ")
            .replace("\n\n ", "\n\n"),
          parameters,
          ...(body ? { requestBody: { required: true, content: { "application/json": { schema: body, example } } } } : {}),
          responses: {
            [String(mi.httpSuccessCode)]: { description: "OK", content: { "application/json": { schema: ref(method.output) } } },
            default: { description: "Error", content: { "application/json": { schema: { $ref: "#/components/schemas/Status" } } } },
          },
          ...(mi.permission && !mi.isPublic ? { security: [{ bearer: [] }, { oauth2: apiScopes }] } : {}),
        };
        paths[route.template] ??= {};
        paths[route.template]![route.verb.toLowerCase()] = op;
      }
    }
  }
  schemas.Status = status;
  const tags = [
    // Redoc's menu shows x-displayName: the service's name; the full name heads its description
    ...services.map((s) => ({
      name: s.typeName,
      "x-displayName": s.name,
      description: [`\`${s.typeName}\``, protoComments[s.typeName]].filter(Boolean).join("\n\n"),
    })),
    ...otherTags,
  ];
  return {
    openapi: "3.0.3",
    info,
    tags,
    paths: { ...paths, ...otherPaths } as Record<string, Record<string, unknown>>,
    components: { schemas, securitySchemes: securitySchemes() },
  };
}

/** The document as read from an instance's issuer: the OAuth 2.0 flow's URLs are that issuer's. */
export function openApiFor(doc: ReturnType<typeof buildOpenApi>, issuer: string | undefined): ReturnType<typeof buildOpenApi> {
  return issuer ? { ...doc, components: { ...doc.components, securitySchemes: securitySchemes(issuer) } } : doc;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The little Markdown the descriptions use, for the table: `code` and paragraphs. */
const markdownLite = (s: string) =>
  esc(s)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\n\n/g, "<br><br>");

/** A plain HTML reference of the same document, for people; no scripts. */
export function renderApiReference(doc: ReturnType<typeof buildOpenApi>): string {
  const rows: string[] = [];
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [verb, op] of Object.entries(ops) as [string, Record<string, unknown>][]) {
      const tag = (op.tags as string[])[0]!;
      const params = ((op.parameters ?? []) as { name: string; in: string }[]).map((p) => `<code>${esc(p.name)}</code> (${p.in})`).join(", ");
      const success = Object.keys(op.responses as object).find((k) => k !== "default");
      const html = `<tr><td><span class="verb ${verb}">${verb.toUpperCase()}</span></td><td><code>${esc(path)}</code></td><td>${esc(
        String(op.summary),
      )}</td><td>${markdownLite(String(op.description))}</td><td>${params || "&mdash;"}</td><td>${success}</td></tr>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  for (const [tag, list] of byTag) {
    rows.push(
      `<h2>${esc(tag)}</h2><table><thead><tr><th></th><th>Path</th><th>Operation</th><th>Notes</th><th>Parameters</th><th>Success</th></tr></thead><tbody>${list.join("")}</tbody></table>`,
    );
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)} API reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%;margin-bottom:2rem}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}
code{font-size:13px}.verb{font-weight:600;font-size:12px;padding:2px 6px;border-radius:3px;background:#eee}.get{background:#dbeafe}.post{background:#dcfce7}
.patch,.put{background:#fef9c3}.delete{background:#fee2e2}</style></head><body>
<h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
<p>Every operation takes <code>Authorization: Bearer &lt;token&gt;</code>: a personal access token, or an access token of the
OAuth 2.0 authorization code flow (<code>/oauth/v2/authorize</code>, <code>/oauth/v2/token</code>) with the scopes ${apiScopes.map((x) => `<code>${esc(x)}</code>`).join(" and ")}. Errors are <code>{"code", "message", "details"}</code> with the gRPC code number.
The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>${rows.join("")}</body></html>`;
}
