import { ScalarType, type DescField, type DescMessage, type DescMethod, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ConnectRouter } from "@connectrpc/connect";
import { readAllBytes, type UniversalHandler } from "@connectrpc/connect/protocol";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { clientKey } from "../authz/context.js";
import { errorOfConnectJson } from "../errors/errors.js";
import { checkJson } from "./decoding.js";
import { BadRequest, registerJsonScope, sendConnectError, sendStatus } from "../http/json-edge.js";
import { HTTP_STATUS_HEADER, methodInfo } from "../schema/descriptors.js";
import { noteRpcCode, type RestRouteConfig } from "../http/rpc-code.js";

export interface RestRoute {
  method: DescMethod;
  verb: "GET" | "PUT" | "POST" | "DELETE" | "PATCH";
  /** The google.api.http template, e.g. /v2/features/organization/{organization_id}. */
  template: string;
  /** Fastify's form of it, variables renamed p0, p1, ... */
  fastifyPath: string;
  /** Fastify parameter name -> field path in the request message. */
  variables: Map<string, string[]>;
  body: string;
}

/** The REST routes of a method, from its google.api.http annotation (primary rule and additional bindings). */
export function restRoutesOf(method: DescMethod): RestRoute[] {
  const rule = methodInfo(method).http;
  if (!rule) return [];
  return [rule, ...rule.additionalBindings].flatMap((r) => {
    const p = r.pattern;
    if (p.case === undefined || p.case === "custom") return [];
    const verb = p.case.toUpperCase() as RestRoute["verb"];
    const variables = new Map<string, string[]>();
    const fastifyPath = p.value.replace(/\{([^}=]+)(=[^}]*)?\}/g, (_m, name: string) => {
      const param = `p${variables.size}`;
      variables.set(param, name.split("."));
      return `:${param}`;
    });
    return [{ method, verb, template: p.value, fastifyPath, variables, body: r.body }];
  });
}

function fieldByName(desc: DescMessage, name: string): DescField {
  const f = desc.fields.find((x) => x.name === name || x.jsonName === name);
  if (!f) throw new BadRequest(`unknown field "${name}" in ${desc.typeName}`);
  return f;
}

/** A query or path string as the JSON value of the field's type (enums by name or number). */
function scalarJson(f: DescField, raw: string, path: string): JsonValue {
  const kind = f.fieldKind === "list" ? f.listKind : f.fieldKind;
  if (kind === "enum") return /^-?\d+$/.test(raw) ? Number(raw) : raw;
  if (kind === "message") return raw;
  const scalar = f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar") ? f.scalar : undefined;
  switch (scalar) {
    case ScalarType.BOOL:
      if (raw === "true" || raw === "1" || raw === "") return true;
      if (raw === "false" || raw === "0") return false;
      throw new BadRequest(`invalid ${path}: "${raw}" is not a boolean`);
    case ScalarType.INT32:
    case ScalarType.UINT32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE: {
      const n = Number(raw);
      if (raw.trim() === "" || Number.isNaN(n)) throw new BadRequest(`invalid ${path}: "${raw}" is not a number`);
      return n;
    }
    default:
      return raw;
  }
}

/** Sets a dotted field path (proto or JSON names) in a JSON request object. */
function setPath(root: JsonObject, desc: DescMessage, path: string[], values: string[]): void {
  let obj = root;
  let d = desc;
  for (let i = 0; i < path.length; i++) {
    const f = fieldByName(d, path[i]!);
    const key = f.jsonName;
    const dotted = path.slice(0, i + 1).join(".");
    if (i === path.length - 1) {
      if (f.fieldKind === "list") obj[key] = values.map((v) => scalarJson(f, v, dotted));
      else if (f.fieldKind === "map") throw new BadRequest(`invalid ${dotted}: maps cannot be set from the URL`);
      else {
        if (values.length > 1) throw new BadRequest(`invalid ${dotted}: given ${values.length} times`);
        obj[key] = scalarJson(f, values[0]!, dotted);
      }
      return;
    }
    if (f.fieldKind !== "message") throw new BadRequest(`invalid ${dotted}: not a message field`);
    const next = obj[key];
    if (next && typeof next === "object" && !Array.isArray(next)) obj = next as JsonObject;
    else {
      const created: JsonObject = {};
      obj[key] = created;
      obj = created;
    }
    d = f.message;
  }
}

/** The whole request message as proto JSON, from query, body and path, in that order of precedence. */
export function requestJson(route: RestRoute, query: Record<string, unknown>, body: unknown, params: Record<string, string>): JsonObject {
  const input = route.method.input;
  const json: JsonObject = {};
  for (const [key, value] of Object.entries(query)) {
    const values = (Array.isArray(value) ? value : [value]).map(String);
    setPath(json, input, key.split("."), values);
  }
  if (route.body === "*") {
    if (body !== undefined && body !== null) {
      if (typeof body !== "object" || Array.isArray(body)) throw new BadRequest("the body must be a JSON object");
      Object.assign(json, body);
    }
  } else if (route.body && body !== undefined && body !== null) {
    const f = fieldByName(input, route.body);
    // A repeated body field (search filters) also takes the whole request as an object: {filters, query, ...}.
    if (f.fieldKind === "list" && !Array.isArray(body)) {
      if (typeof body !== "object") throw new BadRequest(`the body must be a JSON array of ${route.body} or a request object`);
      Object.assign(json, body);
    } else json[f.jsonName] = body as JsonValue;
  }
  for (const [param, path] of route.variables) setPath(json, input, path, [decodeURIComponent(params[param] ?? "")]);
  return json;
}

/** The answer's bytes, sent on as they are (decoding them to a string only for Fastify to encode it again cost a copy of each). */
async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const bytes = body ? await readAllBytes(body, Number.MAX_SAFE_INTEGER) : new Uint8Array(0);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Serves every annotated RPC as REST. Each call is handed to the RPC's Connect handler as a Connect unary
 * JSON request, so REST passes exactly the interceptors (tenancy, authentication, validation, authorization,
 * executions) that gRPC, gRPC-web and Connect calls pass.
 */
export function registerRestGateway(app: FastifyInstance, router: ConnectRouter, bodyLimit: number): RestRoute[] {
  const handlers = new Map<DescMethod, UniversalHandler>(router.handlers.map((h) => [h.method, h]));
  const routes = router.handlers.flatMap((h) => restRoutesOf(h.method));
  registerJsonScope(app, { bodyLimit, where: "REST gateway" }, (scope) => {
    for (const route of routes) {
      const handler = handlers.get(route.method)!;
      const info = methodInfo(route.method);
      // Metrics and traces count the call here, as REST, under the RPC's name (observe.ts).
      const config: RestRouteConfig = { svcRpc: { service: route.method.parent.typeName, method: route.method.name, template: route.template } };
      scope.route({
        method: route.verb,
        url: route.fastifyPath,
        config,
        handler: async (req: FastifyRequest, reply: FastifyReply) => {
          let json: JsonObject;
          try {
            json = requestJson(route, req.query as Record<string, unknown>, req.body, req.params as Record<string, string>);
            // Here rather than in connect-es, which would name the message type instead of the field.
            checkJson(route.method.input, json);
          } catch (e) {
            if (e instanceof BadRequest) return sendStatus(reply, Code.InvalidArgument, e.message);
            if (e instanceof ConnectError) return sendConnectError(reply, e);
            throw e;
          }
          const header = new Headers();
          for (const [k, v] of Object.entries(req.headers)) {
            if (k.startsWith(":") || v === undefined || k === "content-length" || k === "content-type") continue;
            header.set(k, Array.isArray(v) ? v.join(", ") : v);
          }
          if (!header.has("host")) header.set("host", req.host);
          header.set("content-type", "application/json");
          header.set("connect-protocol-version", "1");
          const abort = new AbortController();
          // Only a client that goes away mid-call aborts it (aborting costs a DOMException per call).
          reply.raw.once("close", () => reply.raw.writableFinished || abort.abort());
          const res = await handler({
            httpVersion: req.raw.httpVersion,
            method: "POST",
            url: `http://${req.host}${handler.requestPath}`,
            header,
            body: json,
            signal: abort.signal,
            // Only the client: the gateway notes the call's code itself (no request for the observer).
            contextValues: createContextValues().set(clientKey, req.client),
          } as Parameters<UniversalHandler>[0]);
          const answer = await collect(res.body as AsyncIterable<Uint8Array> | undefined);
          if (res.status !== 200) {
            // The Connect error, details included, as the status object (a body that is not one: UNKNOWN).
            return sendConnectError(reply, errorOfConnectJson(answer));
          }
          const override = Number(res.header?.get(HTTP_STATUS_HEADER));
          noteRpcCode(req, 0);
          return reply
            .status(override || info.httpSuccessCode)
            .header("content-type", "application/json")
            .send(answer);
        },
      });
    }
  });
  return routes;
}
