import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer } from "../support/targets.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

describe("function executions", () => {
  it("let a rest_request_response target change what the server is about to issue", async () => {
    const r = await new TargetServer((got) => ({ body: { ...got.body.claims, department: "billing" } })).start();
    try {
      const res = await rest(t.url, "POST", "/resources/v3alpha/targets", {
        token: t.adminPat,
        body: { name: "claims", restRequestResponse: { url: r.url }, timeout: "2s" },
      });
      const put = await rest(t.url, "POST", "/resources/v3alpha/executions", {
        token: t.adminPat,
        body: { condition: { function: "preaccesstoken" }, targets: [res.body.details.id] },
      });
      expect(put.status).toBe(201);
      const claims = await t.server.functions.run(t.instanceId, "preaccesstoken", { userID: "u1" }, "claims", { sub: "u1" });
      expect(claims).toEqual({ sub: "u1", department: "billing" });
      expect(r.received[0]!.body).toMatchObject({ function: "function/preaccesstoken", instanceID: t.instanceId, userID: "u1", claims: { sub: "u1" } });
      // without an execution, the value passes unchanged and nothing is called
      expect(await t.server.functions.run(t.instanceId, "preuserinfo", {}, "claims", { sub: "u1" })).toEqual({ sub: "u1" });
      expect(r.received.length).toBe(1);
    } finally {
      await r.stop();
    }
  });
});
