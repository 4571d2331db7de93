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
