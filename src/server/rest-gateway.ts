import { ScalarType, type DescField, type DescMessage, type DescMethod, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  createServiceImplSpec,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import { errorToJsonBytes, headerTimeout, parseTimeout } from "@connectrpc/connect/protocol-connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { clientKey } from "../authz/context.js";
import { errorOfConnectJson, unexpectedFault } from "../errors/errors.js";
import { decodeJson } from "./decoding.js";
import { BadRequest, registerJsonScope, sendConnectError, sendStatus } from "../http/json-edge.js";
import { HTTP_STATUS_HEADER, methodInfo } from "../schema/descriptors.js";
import { jsonWriter } from "../schema/json-writer.js";
import { noteRpcCode, type RestRouteConfig } from "../http/rpc-code.js";
import type { Mounted } from "./services.js";

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

/** What a REST call runs: the RPCs' implementations behind the same interceptors as every other protocol's calls. */
export interface RestServices {
  mounted: Mounted[];
  interceptors: Interceptor[];
  /** The Connect router's JSON options (app.ts): its error details are written with them. */
  jsonOptions: { alwaysEmitImplicit: boolean };
}

/**
 * Serves every annotated RPC as REST. Each call runs the RPC's implementation as connect-es's Connect unary
 * handler runs it (a handler context with the request's headers, deadline and signal; the interceptors:
 * tenancy, authentication, validation, authorization, executions), so REST passes exactly what gRPC,
 * gRPC-web and Connect calls pass. The request JSON is decoded once, here, where a field that does not
 * decode can be named (decoding.ts); handing the JSON to connect-es's handler decoded it a second time.
 * The answer is written by the compiled JSON writer (schema/json-writer.ts), the same text connect-es's
 * `toJsonString` writes without building a JSON tree first (issue 31).
 */
export function registerRestGateway(app: FastifyInstance, services: RestServices, bodyLimit: number): RestRoute[] {
  const specs = new Map<DescMethod, MethodImplSpec>();
  for (const m of services.mounted) for (const spec of Object.values(createServiceImplSpec(m.service, m.impl as never).methods)) specs.set(spec.method, spec);
  const routes = [...specs.keys()].flatMap((method) => restRoutesOf(method));
  registerJsonScope(app, { bodyLimit, where: "REST gateway" }, (scope) => {
    for (const route of routes) {
      const spec = specs.get(route.method)!;
      if (spec.kind !== "unary") continue;
      const info = methodInfo(route.method);
      const write = jsonWriter(route.method.output, services.jsonOptions);
      const url = `/${route.method.parent.typeName}/${route.method.name}`;
      // Metrics and traces count the call here, as REST, under the RPC's name (observe.ts).
      const config: RestRouteConfig = { svcRpc: { service: route.method.parent.typeName, method: route.method.name, template: route.template } };
      scope.route({
        method: route.verb,
        url: route.fastifyPath,
        config,
        handler: async (req: FastifyRequest, reply: FastifyReply) => {
          let input: ReturnType<typeof decodeJson>;
          try {
            const json = requestJson(route, req.query as Record<string, unknown>, req.body, req.params as Record<string, string>);
            // Decoded here rather than by connect-es, which would name the message type instead of the field.
            input = decodeJson(route.method.input, json);
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
          // A Connect deadline header is honoured as connect-es honours it.
          const timeout = parseTimeout(header.get(headerTimeout), Number.MAX_SAFE_INTEGER);
          const context = createHandlerContext({
            service: route.method.parent,
            method: route.method,
            protocolName: "connect",
            requestMethod: "POST",
            timeoutMs: timeout.timeoutMs,
            requestSignal: abort.signal,
            requestHeader: header,
            url: `http://${req.host}${url}`,
            responseHeader: { "content-type": "application/json" },
            // Only the client: the gateway notes the call's code itself (no request for the observer).
            contextValues: createContextValues().set(clientKey, req.client),
          });
          let answer: string;
          try {
            if (timeout.error) throw timeout.error;
            const output = await invokeUnaryImplementation(spec, context, input, services.interceptors);
            answer = write(output as never);
          } catch (e) {
            context.abort(e);
            // A fault past the interceptors (an answer that cannot be written): logged under a reference, as every fault.
            const error = e instanceof ConnectError ? e : unexpectedFault(req.log, e, { rpc: url });
            // The Connect error, details included, as the status object: as it reads once written as Connect's JSON.
            return sendConnectError(reply, errorOfConnectJson(errorToJsonBytes(error, services.jsonOptions)));
          } finally {
            context.abort();
          }
          const override = Number(context.responseHeader.get(HTTP_STATUS_HEADER));
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
