import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { ActionService, GetTargetRequestSchema } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

describe("an error of ours", () => {
  it("carries its ID as a google.rpc.ErrorInfo detail, over REST and every client, and at the end of its message", async () => {
    const res = await rest(t.url, "GET", "/resources/v3alpha/targets/no-such-target", { token: t.adminPat });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe(Code.NotFound);
    const id = /\(([A-Z0-9]+-\w+)\)$/.exec(res.body.message)?.[1];
    expect(id, res.body.message).toBeTruthy();
    expect(res.body.details).toEqual([{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: id, domain: "svc-iam" }]);

    for (const protocol of ["connect-h1", "connect-h2", "grpc-web"] as const) {
      const err = await expectCode(
        call(protocol, t.url, ActionService, ActionService.method.getTarget, create(GetTargetRequestSchema, { id: "no-such-target" }), { token: t.adminPat }),
        Code.NotFound,
      );
      expect(
        err.findDetails(ErrorInfoSchema).map((d) => ({ reason: d.reason, domain: d.domain })),
        protocol,
      ).toEqual([{ reason: id, domain: "svc-iam" }]);
    }
  });
});

describe("one JSON edge for the REST gateway and the older admin and management APIs", () => {
  const paths = ["/resources/v3alpha/targets", "/admin/v1/import"];

  it("refuse a body that is not JSON alike, naming what is wrong", async () => {
    for (const path of paths) {
      const res = await rest(t.url, "POST", path, { token: t.adminPat, body: "{not json" });
      expect(res.status, path).toBe(400);
      expect(res.body.code, path).toBe(Code.InvalidArgument);
      expect(res.body.message, path).toMatch(/^the body is not valid JSON/);
      expect(res.body.details, path).toEqual([]);
    }
  });

  it("refuse a body over their limit alike: 413, RESOURCE_EXHAUSTED, the limit named", async () => {
    const gateway = await rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body: JSON.stringify({ name: "x".repeat(5 * 2 ** 20) }) });
    expect(gateway.status).toBe(413);
    expect(gateway.body).toMatchObject({ code: Code.ResourceExhausted, message: "the body is larger than 4 MiB", details: [] });
    const older = await rest(t.url, "POST", "/admin/v1/import", {
      token: t.adminPat,
      body: JSON.stringify({ data_orgs: { orgs: [{ name: "x".repeat(33 * 2 ** 20) }] } }),
    });
    expect(older.status).toBe(413);
    expect(older.body.code).toBe(Code.ResourceExhausted);
    expect(older.body.message).toMatch(/^the body is larger than 32 MiB: import larger data from a file/);
  });

  it("answer a missing token alike, with the error's ID as a detail", async () => {
    for (const path of paths) {
      const res = await rest(t.url, "POST", path, { body: {} });
      expect(res.status, path).toBe(401);
      expect(res.body.code, path).toBe(Code.Unauthenticated);
      expect(res.body.details[0]?.["@type"], path).toBe("type.googleapis.com/google.rpc.ErrorInfo");
    }
  });
});
