import { create, fromJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionService, SearchTargetsRequestSchema } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
const lines: string[] = [];
beforeAll(async () => {
  t = await startTestServer({ SVC_LOG_LEVEL: "error" }, { logger: true, logStream: { write: (line) => void lines.push(line) } });
});
afterAll(async () => {
  await t?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The log line of the fault with this reference: logged at error level, with the stack of what failed. */
function faultLine(ref: string): Record<string, unknown> {
  const found = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.ref === ref);
  expect(found, `one log line with reference ${ref}`).toHaveLength(1);
  expect(found[0]).toMatchObject({ level: 50, msg: "request failed on the server's side", ref });
  expect((found[0]!.err as { stack?: string }).stack).toBeTruthy();
  return found[0]!;
}

describe("a fault on the server's side", () => {
  it("answers INTERNAL with a reference in an ErrorInfo detail and no internal text, and the server goes on", async () => {
    // A database that fails under a handler: the table a search reads is gone for a moment.
    await t.server.db.execScript(`ALTER TABLE "targets" RENAME TO "targets_away"`);
    try {
      const res = await rest(t.url, "POST", "/resources/v3alpha/targets/_search", { token: t.adminPat, body: {} });
      expect(res.status).toBe(500);
      expect(res.body.code).toBe(Code.Internal);
      expect(res.body.message).toBe("internal error");
      expect(res.body.details).toHaveLength(1);
      const [detail] = res.body.details;
      expect(detail).toEqual({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "UNEXPECTED_FAULT",
        domain: "svc-iam",
        metadata: { reference: expect.stringMatching(UUID) },
      });
      const ref = detail.metadata.reference as string;
      // google.rpc.Status's JSON: the standard message's fields beside its @type.
      const { "@type": _type, ...fields } = detail;
      expect(fromJson(ErrorInfoSchema, fields).metadata).toEqual({ reference: ref });
      expect(faultLine(ref).method).toBe("svc.resources.action.v3alpha.ActionService/SearchTargets");
      expect(JSON.stringify(res.body)).not.toMatch(/targets|relation|prisma/i);

      // Connect and gRPC-web clients find the same detail (a new reference per fault).
      for (const protocol of ["connect-h1", "grpc-web"] as const) {
        const err = await expectCode(
          call(protocol, t.url, ActionService, ActionService.method.searchTargets, create(SearchTargetsRequestSchema, {}), { token: t.adminPat }),
          Code.Internal,
        );
        expect(err.rawMessage).toBe("internal error");
        const infos = err.findDetails(ErrorInfoSchema);
        expect(infos).toHaveLength(1);
        expect(infos[0]).toMatchObject({ reason: "UNEXPECTED_FAULT", domain: "svc-iam", metadata: { reference: expect.stringMatching(UUID) } });
        expect(infos[0]!.metadata.reference).not.toBe(ref);
        faultLine(infos[0]!.metadata.reference!);
      }
    } finally {
      await t.server.db.execScript(`ALTER TABLE "targets_away" RENAME TO "targets"`);
    }
    expect((await rest(t.url, "POST", "/resources/v3alpha/targets/_search", { token: t.adminPat, body: {} })).status).toBe(200);
  });
});

describe("a fault on the server's side at the JSON-only routes", () => {
  it("answers the export with the same status object: INTERNAL, the reference in an ErrorInfo detail", async () => {
    await t.server.db.execScript(`ALTER TABLE "user_metadata" RENAME TO "user_metadata_away"`);
    try {
      const res = await rest(t.url, "POST", "/admin/v1/export", { token: t.adminPat, body: { response_output: true } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        code: Code.Internal,
        message: "internal error",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "UNEXPECTED_FAULT",
            domain: "svc-iam",
            metadata: { reference: expect.stringMatching(UUID) },
          },
        ],
      });
      const ref = res.body.details[0].metadata.reference as string;
      expect(faultLine(ref).where).toBe("portability");
    } finally {
      await t.server.db.execScript(`ALTER TABLE "user_metadata_away" RENAME TO "user_metadata"`);
    }
    expect((await rest(t.url, "POST", "/admin/v1/export", { token: t.adminPat, body: { response_output: true } })).status).toBe(200);
  });
});

describe("a fault on the server's side at the OAuth endpoints", () => {
  it("answers server_error with a reference and no internal text", async () => {
    await t.server.db.execScript(`ALTER TABLE "instance_domains" RENAME TO "instance_domains_away"`);
    try {
      // an unknown host is looked up in the database, which now fails
      const res = await rest(t.url, "GET", "/.well-known/openid-configuration", { host: "fault.example" });
      expect(res.status).toBe(500);
      const body = res.body;
      expect(body.error).toBe("server_error");
      expect(body.error_description).toMatch(/^internal error, reference [0-9a-f-]{36}$/);
      faultLine(body.error_description.slice("internal error, reference ".length));
      expect(JSON.stringify(body)).not.toMatch(/instance_domains|relation|prisma/i);
    } finally {
      await t.server.db.execScript(`ALTER TABLE "instance_domains_away" RENAME TO "instance_domains"`);
    }
  });
});
