import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChangePasswordRequestSchema,
  RequestPasswordResetRequestSchema,
  ResendEmailCodeRequestSchema,
  UserService,
  VerifyEmailRequestSchema,
  VerifyPhoneRequestSchema,
} from "../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { codeLifetimeMs, requestInitialPassword } from "../../src/command/user-codes.js";
import { call, expectCode, rest } from "../support/clients.js";
import { MovableClock } from "../support/clock.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import type { MailServer } from "../support/smtp.js";
import { decodedMail, linkIn } from "../support/smtp.js";
import type { TestServer } from "../support/server.js";
import type { TargetServer } from "../support/targets.js";

let t: TestServer;
let mail: MailServer;
let sms: TargetServer;
let close: () => Promise<void>;
const clock = new MovableClock();
const PASSWORD = "Secr3t!pass";

beforeAll(async () => {
  ({ t, mail, sms, close } = await startMessagingServer({}, { clock }));
});
afterAll(async () => {
  await close?.();
});

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });
const grpc = { token: "" };
const getUser = async (id: string) => (await api("GET", `/users/${id}`)).body.user.human;
const eventTypes = async (id: string) =>
  (await t.server.db.prisma.event.findMany({ where: { aggregateId: id }, orderBy: { position: "asc" }, select: { type: true } })).map((e) => e.type);

async function createHuman(username: string, human: Record<string, unknown>) {
  const r = await api("POST", "/users", { username, human: { profile: { givenName: username, familyName: "Test" }, ...human } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
}

const codeOfLink = (link: string) => new URL(link, "http://x").searchParams.get("code")!;

describe("e-mail verification through the user API", () => {
  it("a new user with an unverified address is mailed a code and link; gRPC verifies it once; the code is sealed at rest", async () => {
    grpc.token = t.adminPat;
    const id = await createHuman("vera", { email: { address: "vera@example.com" }, password: { password: PASSWORD } });
    const [m] = await mailsTo(mail, "vera@example.com");
    const link = linkIn(m!.raw, "/ui/login/email/verify");
    expect(link).toMatch(new RegExp(`^/ui/login/email/verify\\?userId=${id}&code=[A-Z2-9]{8}$`));
    const code = codeOfLink(link);
    expect(decodedMail(m!.raw)).toContain(`your code is ${code}`);

    // Sealed in the projection and the event, never in clear.
    const row = await t.server.db.prisma.userCode.findUniqueOrThrow({ where: { userId_kind: { userId: id, kind: "email" } } });
    expect(row.code.startsWith("v1.")).toBe(true);
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: id }, select: { payload: true } });
    expect(JSON.stringify(events)).not.toContain(code);

    const verify = (c: string) =>
      call("grpc", t.url, UserService, UserService.method.verifyEmail, create(VerifyEmailRequestSchema, { id, verificationCode: c }), grpc);
    const wrong = await expectCode(verify(code === "AAAAAAAA" ? "BBBBBBBB" : "AAAAAAAA"), Code.InvalidArgument);
    expect(wrong.message).toContain("verification_code");
    expect((await getUser(id)).email.isVerified).toBe(false);

    await verify(code.toLowerCase());
    expect((await getUser(id)).email.isVerified).toBe(true);
    // The wrong try is recorded: five spend a code.
    expect(await eventTypes(id)).toEqual(["user.human.added", "user.email.code_added", "user.code.failed", "user.email.verified"]);
    // Single use.
    expect((await expectCode(verify(code), Code.InvalidArgument)).message).toContain("verification_code");
    // Verified: no new code.
    await expectCode(
      call("grpc", t.url, UserService, UserService.method.resendEmailCode, create(ResendEmailCodeRequestSchema, { id }), grpc),
      Code.FailedPrecondition,
    );
  });

  it("REST: return_code gives the code to a custom UI and mails nothing; a changed address gets a new code, the old one stops working; codes expire", async () => {
    const id = await createHuman("ruth", { email: { address: "ruth@example.com", isVerified: true }, password: { password: PASSWORD } });
    const patched = await api("PATCH", `/users/${id}`, { human: { email: { address: "ruth2@example.com" } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const [m] = await mailsTo(mail, "ruth2@example.com");
    const mailed = codeOfLink(linkIn(m!.raw, "/ui/login/email/verify"));

    const before = mail.received.length;
    const resent = await api("POST", `/users/${id}/email/_resend_code`, { returnCode: true });
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    const returned = resent.body.verificationCode as string;
    expect(returned).toMatch(/^[A-Z2-9]{8}$/);
    await t.server.notifications.idle();
    expect(mail.received.length).toBe(before);

    // The newer code replaced the mailed one.
    const old = await api("POST", `/users/${id}/email/_verify`, { verificationCode: mailed });
    expect(old.status).toBe(400);
    expect(JSON.stringify(old.body)).toContain("verification_code");

    // Expired: the server's clock moves past the code's lifetime (and back, for the tests after this one).
    clock.advance(codeLifetimeMs.email + 1000);
    try {
      expect((await api("POST", `/users/${id}/email/_verify`, { verificationCode: returned })).status).toBe(400);
    } finally {
      clock.reset();
    }
    expect((await getUser(id)).email.isVerified).toBe(false);

    const fresh = (await api("POST", `/users/${id}/email/_resend_code`, { returnCode: true })).body.verificationCode as string;
    expect((await api("POST", `/users/${id}/email/_verify`, { verificationCode: fresh })).status).toBe(200);
    expect((await getUser(id)).email).toEqual({ address: "ruth2@example.com", isVerified: true });

    // Bad input names its field.
    const empty = await api("POST", `/users/${id}/email/_verify`, { verificationCode: "" });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.body)).toContain("verification_code");
  });
});

describe("phone verification", () => {
  it("an unverified number gets a 6-digit code by SMS through the HTTP provider; gRPC verifies it once", async () => {
    const id = await createHuman("phil", {
      email: { address: "phil@example.com", isVerified: true },
      phone: { number: "+41790000042" },
      password: { password: PASSWORD },
    });
    let got = sms.received.filter((r) => (r.body as { recipient?: string }).recipient === "+41790000042");
    for (let i = 0; i < 200 && !got.length; i++) {
      await new Promise((r) => setTimeout(r, 25));
      got = sms.received.filter((r) => (r.body as { recipient?: string }).recipient === "+41790000042");
    }
    expect(got).toHaveLength(1);
    const code = /code is (\d{6})\./.exec((got[0]!.body as { text: string }).text)![1]!;
    const verify = (c: string) =>
      call("grpc", t.url, UserService, UserService.method.verifyPhone, create(VerifyPhoneRequestSchema, { id, verificationCode: c }), grpc);
    await expectCode(verify(code === "000000" ? "111111" : "000000"), Code.InvalidArgument);
    await verify(code);
    expect((await getUser(id)).phone).toEqual({ number: "+41790000042", isVerified: true });
    expect(await eventTypes(id)).toContain("user.phone.verified");
    await expectCode(verify(code), Code.InvalidArgument);

    // Over REST too, with a returned code.
    await api("PATCH", `/users/${id}`, { human: { phone: { number: "+41790000043" } } });
    const again = (await api("POST", `/users/${id}/phone/_resend_code`, { returnCode: true })).body.verificationCode as string;
    expect(again).toMatch(/^\d{6}$/);
    expect((await api("POST", `/users/${id}/phone/_verify`, { verificationCode: again })).status).toBe(200);
  });

  it("a code is spent after five wrong tries: guessing six digits does not pay", async () => {
    const id = await createHuman("guessed", { email: { address: "guessed@example.com", isVerified: true }, phone: { number: "+41790000044" } });
    const sent = await api("POST", `/users/${id}/phone/_resend_code`, { returnCode: true });
    const code = sent.body.verificationCode as string;
    const wrong = code === "000000" ? "000001" : "000000";
    for (let i = 0; i < 4; i++) expect((await api("POST", `/users/${id}/phone/_verify`, { verificationCode: wrong })).status).toBe(400);
    // Four wrong tries leave the code working; a fresh one starts the count again.
    const fresh = (await api("POST", `/users/${id}/phone/_resend_code`, { returnCode: true })).body.verificationCode as string;
    const wrongFresh = fresh === "000000" ? "000001" : "000000";
    for (let i = 0; i < 5; i++) expect((await api("POST", `/users/${id}/phone/_verify`, { verificationCode: wrongFresh })).status).toBe(400);
    const spent = await api("POST", `/users/${id}/phone/_verify`, { verificationCode: fresh });
    expect(spent.status).toBe(400);
    expect(spent.body.message).toContain("wrong, used or expired");
    expect((await eventTypes(id)).filter((t) => t === "user.code.failed")).toHaveLength(9);
  });
});

describe("passwords through the user API", () => {
  it("a user created without a password is mailed the initial-password link; requestInitialPassword sends it again", async () => {
    const id = await createHuman("ines", { email: { address: "ines@example.com" } });
    const [first] = await mailsTo(mail, "ines@example.com");
    expect(linkIn(first!.raw, "/ui/login/password/init")).toMatch(new RegExp(`^/ui/login/password/init\\?userId=${id}&code=[A-Z2-9]{8}$`));
    expect(decodedMail(first!.raw)).toContain("an account was created for you");

    // The import (another issue) calls this for imported users.
    await requestInitialPassword(t.server.es, t.server.box, { instanceId: t.instanceId, userId: id, creator: "import" });
    const both = await mailsTo(mail, "ines@example.com", 2);
    const code = codeOfLink(linkIn(both[1]!.raw, "/ui/login/password/init"));
    expect(code).not.toBe(codeOfLink(linkIn(first!.raw, "/ui/login/password/init")));

    // The code sets the password over gRPC and verifies the address (the mail reached its owner).
    const change = (proof: { case: "verificationCode" | "currentPassword"; value: string }, newPassword: string) =>
      call("grpc", t.url, UserService, UserService.method.changePassword, create(ChangePasswordRequestSchema, { id, proof, newPassword }), grpc);
    await change({ case: "verificationCode", value: code }, PASSWORD);
    expect((await getUser(id)).email.isVerified).toBe(true);
    expect((await api("GET", `/users/${id}`)).body.user.state).toBe("USER_STATE_ACTIVE");
    await expectCode(change({ case: "verificationCode", value: code }, "An0ther!pass"), Code.InvalidArgument);
  });

  it("reset (code returned or mailed) and change with the current password; wrong proofs and weak passwords name their fields", async () => {
    const id = await createHuman("paul", { email: { address: "paul@example.com", isVerified: true }, password: { password: PASSWORD } });
    const reset = await call(
      "grpc",
      t.url,
      UserService,
      UserService.method.requestPasswordReset,
      create(RequestPasswordResetRequestSchema, { id, returnCode: true }),
      grpc,
    );
    expect(reset.verificationCode).toMatch(/^[A-Z2-9]{8}$/);

    const change = (body: Record<string, string>) => api("POST", `/users/${id}/password/_change`, body);
    const weak = await change({ verificationCode: reset.verificationCode, newPassword: "short" });
    expect(weak.status).toBe(400);
    expect(JSON.stringify(weak.body)).toContain("new_password");
    expect((await change({ verificationCode: reset.verificationCode, newPassword: "Fresh!pass1" })).status).toBe(200);
    expect((await change({ verificationCode: reset.verificationCode, newPassword: "Fresh!pass2" })).status).toBe(400);

    const wrong = await change({ currentPassword: PASSWORD, newPassword: "Fresh!pass2" });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).toContain("current_password");
    expect((await change({ currentPassword: "Fresh!pass1", newPassword: "Fresh!pass2" })).status).toBe(200);
    const none = await change({ newPassword: "Fresh!pass3" });
    expect(none.status).toBe(400);

    // Mailed: the reset link.
    expect((await api("POST", `/users/${id}/password/_reset`, {})).status).toBe(200);
    const [m] = await mailsTo(mail, "paul@example.com");
    expect(linkIn(m!.raw, "/ui/login/password/reset")).toMatch(new RegExp(`^/ui/login/password/reset\\?userId=${id}&code=`));
  });
});
