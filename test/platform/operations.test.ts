import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ SVC_CORS_ORIGINS: "http://app.example" });
});
afterAll(() => t?.close());

/** One bidi reflection exchange over @grpc/grpc-js (a real gRPC client over HTTP/2). */
function reflect<Req extends DescMessage, Res extends DescMessage>(
  path: string,
  reqSchema: Req,
  resSchema: Res,
  requests: MessageShape<Req>[],
): Promise<MessageShape<Res>[]> {
  const client = new grpc.Client(`127.0.0.1:${t.port}`, grpc.credentials.createInsecure());
  const stream = client.makeBidiStreamRequest(
    path,
    (m: MessageShape<Req>) => Buffer.from(toBinary(reqSchema, m)),
    (b: Buffer) => fromBinary(resSchema, b),
  );
  const out: MessageShape<Res>[] = [];
  return new Promise((resolve, reject) => {
    stream.on("data", (m: MessageShape<Res>) => out.push(m));
    stream.on("error", reject);
    stream.on("end", () => {
      client.close();
      resolve(out);
    });
    for (const r of requests) stream.write(r);
    stream.end();
  });
}

describe("operations", () => {
  it("serves /healthz and /readyz", async () => {
    expect((await rest(t.url, "GET", "/healthz")).body).toEqual({ status: "ok" });
    expect((await rest(t.url, "GET", "/readyz")).body).toEqual({ status: "ready" });
  });

  it("answers grpc.health.v1 Check without a token, and NOT_FOUND for an unknown service", async () => {
    const all = await call("grpc", t.url, Health, Health.method.check, create(Health.method.check.input, {}));
    expect(all.status).toBe(Status.SERVING);
    const one = await call(
      "grpc",
      t.url,
      Health,
      Health.method.check,
      create(Health.method.check.input, { service: "svc.settings.language.v3alpha.LanguageSettingsService" }),
    );
    expect(one.status).toBe(Status.SERVING);
    await expectCode(call("grpc", t.url, Health, Health.method.check, create(Health.method.check.input, { service: "no.Such" })), Code.NotFound);
  });

  it("serves gRPC server reflection v1 and v1alpha on the same port", async () => {
    const [list, file] = await reflect(
      "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
      v1.ServerReflectionRequestSchema,
      v1.ServerReflectionResponseSchema,
      [
        create(v1.ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } }),
        create(v1.ServerReflectionRequestSchema, {
          messageRequest: { case: "fileContainingSymbol", value: "svc.settings.language.v3alpha.LanguageSettingsService.ResolveLanguages" },
        }),
      ],
    );
    const names = list!.messageResponse.case === "listServicesResponse" ? list!.messageResponse.value.service.map((s) => s.name) : [];
    expect(names).toEqual(
      expect.arrayContaining([
        "svc.settings.language.v3alpha.LanguageSettingsService",
        "svc.feature.v2.FeatureService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
      ]),
    );
    expect(file!.messageResponse.case, JSON.stringify(file!.messageResponse.value)).toBe("fileDescriptorResponse");
    const protos =
      file!.messageResponse.case === "fileDescriptorResponse"
        ? file!.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b))
        : [];
    const langFile = protos.find((p) => p.name === "svc/settings/language/v3alpha/language_service.proto");
    expect(langFile?.service[0]?.method.map((m) => m.name)).toEqual(["SetLanguages", "ResolveLanguages"]);
    // dependencies come along, so a client can build the whole descriptor set
    expect(protos.map((p) => p.name)).toContain("svc/settings/object/v3alpha/object.proto");

    const [alpha, missing] = await reflect(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      v1alpha.ServerReflectionRequestSchema,
      v1alpha.ServerReflectionResponseSchema,
      [
        create(v1alpha.ServerReflectionRequestSchema, { messageRequest: { case: "fileByFilename", value: "svc/feature/v2/feature_service.proto" } }),
        create(v1alpha.ServerReflectionRequestSchema, { messageRequest: { case: "fileByFilename", value: "nope.proto" } }),
      ],
    );
    expect(alpha!.messageResponse.case).toBe("fileDescriptorResponse");
    expect(missing!.messageResponse.case).toBe("errorResponse");
  });

  it("publishes an OpenAPI 3 document derived from the protos, and a reference page", async () => {
    const doc = (await rest(t.url, "GET", "/openapi.json")).body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths["/settings/v3alpha/languages"])).toEqual(expect.arrayContaining(["get", "patch"]));
    expect(doc.paths["/v2/features/organization/{organization_id}"].get.parameters[0]).toMatchObject({ name: "organization_id", in: "path" });
    expect(doc.paths["/settings/v3alpha/languages"].get.parameters.map((p: { name: string }) => p.name)).toContain("ctx.org_id");
    expect(doc.components.schemas["svc.settings.language.v3alpha.ResolvedLanguageSettings"]).toBeDefined();
    const page = await rest(t.url, "GET", "/docs");
    expect(page.headers["content-type"]).toContain("text/html");
    expect(page.body).toContain("/settings/v3alpha/languages");
  });

  it("answers CORS preflights for allowed origins with the gRPC-web and Connect headers exposed", async () => {
    const pre = await rest(t.url, "OPTIONS", "/svc.settings.language.v3alpha.LanguageSettingsService/ResolveLanguages", {
      headers: {
        origin: "http://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-grpc-web,authorization",
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("http://app.example");
    expect(String(pre.headers["access-control-allow-headers"]).toLowerCase()).toContain("x-grpc-web");
    const res = await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat, headers: { origin: "http://app.example" } });
    expect(String(res.headers["access-control-expose-headers"]).toLowerCase()).toContain("grpc-status");
    const other = await rest(t.url, "OPTIONS", "/settings/v3alpha/languages", {
      headers: { origin: "http://evil.example", "access-control-request-method": "GET" },
    });
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("keeps pages (authorize, end session, the login UI) and /metrics closed to other origins, allowed ones too", async () => {
    const origin = { origin: "http://app.example" };
    const preflight = { ...origin, "access-control-request-method": "POST" };
    for (const path of ["/oauth/v2/authorize", "/oidc/v1/end_session", "/ui/login", "/ui/login/password/reset", "/metrics"]) {
      const pre = await rest(t.url, "OPTIONS", path, { headers: preflight });
      expect(pre.status, path).toBe(404);
      expect(pre.headers["access-control-allow-origin"], path).toBeUndefined();
      expect(pre.headers["access-control-allow-methods"], path).toBeUndefined();
      const get = await rest(t.url, "GET", path, { headers: origin });
      expect(get.headers["access-control-allow-origin"], path).toBeUndefined();
    }
    // The endpoints a browser app calls stay open to it.
    for (const path of ["/oauth/v2/token", "/oauth/v2/introspect", "/oidc/v1/userinfo", "/oauth/v2/keys"]) {
      const pre = await rest(t.url, "OPTIONS", path, { headers: preflight });
      expect(pre.headers["access-control-allow-origin"], path).toBe("http://app.example");
    }
  });
});
