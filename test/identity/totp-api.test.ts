import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddTotpRequestSchema, RemoveTotpRequestSchema, UserService, VerifyTotpRequestSchema } from "../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { call, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman } from "../oidc/rp.js";
import { awayFromPeriodEnd, totpCode, wrongTotpCode } from "../support/totp.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });

describe("TOTP through the user API", () => {
  it("REST: add returns the secret once, verify confirms it, the secret is stored sealed, remove ends it", async () => {
    const id = await addHuman(t, "rita", "Secr3t!pass");
    const added = await api("POST", `/users/${id}/totp`);
    expect(added.status).toBe(201);
    const secret = added.body.secret as string;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(added.body.uri as string);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(uri.searchParams.get("secret")).toBe(secret);
    expect(decodeURIComponent(uri.pathname)).toContain("rita");
    expect(added.body.details.id).toBe(id);

    // Stored sealed with the master key (the projection and the event), never in clear.
    const row = await t.server.db.prisma.userTotp.findUniqueOrThrow({ where: { userId: id } });
    expect(row.verified).toBe(false);
    expect(row.secret.startsWith("v1.")).toBe(true);
    expect(row.secret).not.toContain(secret);
    const events = await t.server.db.prisma.$queryRawUnsafe<{ payload: unknown }[]>(
      "select payload from events where aggregate_id = $1 and type = 'user.totp.added'",
      id,
    );
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events[0]!.payload)).not.toContain(secret);

    // A wrong code: INVALID_ARGUMENT naming the field; still unverified.
    const wrong = await api("POST", `/users/${id}/totp/_verify`, { code: wrongTotpCode(secret) });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).toContain("code");
    expect((await t.server.db.prisma.userTotp.findUniqueOrThrow({ where: { userId: id } })).verified).toBe(false);

    expect((await api("POST", `/users/${id}/totp/_verify`, { code: totpCode(secret) })).status).toBe(200);
    expect((await t.server.db.prisma.userTotp.findUniqueOrThrow({ where: { userId: id } })).verified).toBe(true);
    // A second enrolment while one is verified: ALREADY_EXISTS (409).
    expect((await api("POST", `/users/${id}/totp`)).status).toBe(409);

    expect((await api("DELETE", `/users/${id}/totp`)).status).toBe(200);
    expect(await t.server.db.prisma.userTotp.findUnique({ where: { userId: id } })).toBeNull();
    expect((await api("DELETE", `/users/${id}/totp`)).status).toBe(404);
  });

  it("gRPC: add, verify with a wrong and a right code, remove; machines have none", async () => {
    const id = await addHuman(t, "greg", "Secr3t!pass");
    const opts = { token: t.adminPat };
    const added = await call("grpc", t.url, UserService, UserService.method.addTotp, create(AddTotpRequestSchema, { id }), opts);
    expect(added.secret).toMatch(/^[A-Z2-7]{32}$/);
    await expectCode(
      call("grpc", t.url, UserService, UserService.method.verifyTotp, create(VerifyTotpRequestSchema, { id, code: wrongTotpCode(added.secret) }), opts),
      Code.InvalidArgument,
    );
    const verified = await call(
      "grpc",
      t.url,
      UserService,
      UserService.method.verifyTotp,
      create(VerifyTotpRequestSchema, { id, code: totpCode(added.secret) }),
      opts,
    );
    expect(verified.details!.id).toBe(id);
    expect((await t.server.db.prisma.userTotp.findUniqueOrThrow({ where: { userId: id } })).verified).toBe(true);
    await call("grpc", t.url, UserService, UserService.method.removeTotp, create(RemoveTotpRequestSchema, { id }), opts);
    expect(await t.server.db.prisma.userTotp.findUnique({ where: { userId: id } })).toBeNull();

    const machine = await api("POST", "/users", { username: "bot-totp", machine: { name: "Bot" } });
    await expectCode(
      call("grpc", t.url, UserService, UserService.method.addTotp, create(AddTotpRequestSchema, { id: machine.body.details.id }), opts),
      Code.FailedPrecondition,
    );
    await expectCode(call("grpc", t.url, UserService, UserService.method.addTotp, create(AddTotpRequestSchema, { id: "nobody" }), opts), Code.NotFound);
  });
});

describe("ListAuthenticationMethodTypes", () => {
  it("names the ways of signing in a user has set up, as they come and go", async () => {
    const methods = async (id: string) => {
      const r = await api("GET", `/users/${id}/authentication_methods`);
      expect(r.status).toBe(200);
      return r.body.authMethodTypes ?? [];
    };
    const id = await addHuman(t, "methods", "Secr3t!pass");
    expect(await methods(id)).toEqual(["AUTHENTICATION_METHOD_TYPE_PASSWORD"]);
    await awayFromPeriodEnd();
    const secret = (await api("POST", `/users/${id}/totp`)).body.secret as string;
    // enrolled but not verified: not a way of signing in yet
    expect(await methods(id)).toEqual(["AUTHENTICATION_METHOD_TYPE_PASSWORD"]);
    expect((await api("POST", `/users/${id}/totp/_verify`, { code: totpCode(secret) })).status).toBe(200);
    expect((await api("POST", `/users/${id}/otp_email`)).status).toBe(200);
    expect(await methods(id)).toEqual(["AUTHENTICATION_METHOD_TYPE_PASSWORD", "AUTHENTICATION_METHOD_TYPE_TOTP", "AUTHENTICATION_METHOD_TYPE_OTP_EMAIL"]);
    expect((await api("DELETE", `/users/${id}/totp`)).status).toBe(200);
    expect(await methods(id)).toEqual(["AUTHENTICATION_METHOD_TYPE_PASSWORD", "AUTHENTICATION_METHOD_TYPE_OTP_EMAIL"]);
    // a machine has none (its keys and tokens are ListMachineCredentials')
    const machine = await t.serviceUser("methods-bot");
    expect(await methods(machine.userId)).toEqual([]);
    // the caller needs user.read where the user is
    const stranger = await t.serviceUser("methods-stranger");
    expect((await rest(t.url, "GET", `/resources/v3alpha/users/${id}/authentication_methods`, { token: stranger.token })).status).toBe(403);
  });
});
