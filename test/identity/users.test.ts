import { createPrivateKey, createPublicKey, sign, verify } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserState } from "../../gen/svc/resources/user/v3alpha/user_pb.js";
import { CreateUserRequestSchema, GetUserRequestSchema, UserService } from "../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { verifyPassword } from "../../src/crypto/password.js";
import { call, connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let orgA: string;
let orgB: string;
let ownerA: { userId: string; token: string };

const human = (username: string, extra: object = {}) => ({
  username,
  human: {
    profile: { givenName: "Ada", familyName: "Lovelace", preferredLanguage: "en" },
    email: { address: `${username}@example.com`, isVerified: true },
    ...extra,
  },
});
const machine = (username: string) => ({ username, machine: { name: `${username} bot`, description: "calls APIs", accessTokenType: "ACCESS_TOKEN_TYPE_JWT" } });
const post = (path: string, body?: unknown, token = t.adminPat) =>
  rest(t.url, "POST", `/resources/v3alpha${path}`, { token, ...(body !== undefined ? { body } : {}) });
const get = (path: string, token = t.adminPat) => rest(t.url, "GET", `/resources/v3alpha${path}`, { token });
const createUser = async (body: object, org = orgA) => {
  const r = await post(`/users?ctx.org_id=${org}`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.details.id as string;
};

beforeAll(async () => {
  t = await startTestServer();
  orgA = await t.org("Users A");
  orgB = await t.org("Users B");
  ownerA = await t.serviceUser("owner-a", [{ type: "org", id: orgA, roles: ["ORG_OWNER"] }], orgA);
});
afterAll(() => t?.close());

describe("users: humans and machines", () => {
  it("are created (201), read back without secrets, and owned by their organisation", async () => {
    const id = await createUser(human("ada", { phone: { number: "+41791234567" }, password: { password: "Secr3t!pass", changeRequired: true } }));
    const r = await get(`/users/${id}`);
    expect(r.status).toBe(200);
    expect(r.body.user).toMatchObject({
      state: "USER_STATE_ACTIVE",
      username: "ada",
      details: { id, resourceOwner: { type: "OWNER_TYPE_ORG", id: orgA } },
      human: {
        profile: { givenName: "Ada", familyName: "Lovelace", displayName: "Ada Lovelace", preferredLanguage: "en" },
        email: { address: "ada@example.com", isVerified: true },
        phone: { number: "+41791234567", isVerified: false },
        passwordChangeRequired: true,
      },
    });
    expect(JSON.stringify(r.body)).not.toMatch(/Secr3t|scrypt/);
    const row = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect((await verifyPassword("Secr3t!pass", row.passwordHash!)).valid).toBe(true);

    // over gRPC, a machine in the default organisation when ctx is left out
    const res = await call(
      "grpc",
      t.url,
      UserService,
      UserService.method.createUser,
      create(CreateUserRequestSchema, { user: { username: "robot", type: { case: "machine", value: { name: "Robot" } } } }),
      { token: t.adminPat },
    );
    const m = await call("grpc", t.url, UserService, UserService.method.getUser, create(GetUserRequestSchema, { id: res.details!.id }), { token: t.adminPat });
    expect(m.user!.details!.resourceOwner!.id).toBe(t.defaultOrgId);
    expect(m.user!.type.case).toBe("machine");
    expect(m.user!.state).toBe(UserState.ACTIVE);
  });

  it("a human without a password is in the initial state until one is set", async () => {
    const id = await createUser(human("no-password"));
    expect((await get(`/users/${id}`)).body.user.state).toBe("USER_STATE_INITIAL");
    expect((await post(`/users/${id}/_set_password`, { password: "N3w!password" })).status).toBe(200);
    expect((await get(`/users/${id}`)).body.user.state).toBe("USER_STATE_ACTIVE");
  });

  it("usernames are unique in the instance regardless of case: ALREADY_EXISTS (409)", async () => {
    await createUser(human("Grace"));
    const again = await post(`/users?ctx.org_id=${orgB}`, human("grace"));
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/username "grace" is taken/);
    const other = await createUser(human("hopper"));
    const rename = await rest(t.url, "PATCH", `/resources/v3alpha/users/${other}`, { token: t.adminPat, body: { username: "GRACE" } });
    expect(rename.status).toBe(409);
  });

  it("bad input is INVALID_ARGUMENT naming the field, and nothing is written", async () => {
    const before = await t.server.db.prisma.user.count();
    const cases: [object, RegExp][] = [
      [{ ...human("x1"), human: { profile: { givenName: "A", familyName: "B" }, email: { address: "not-an-email" } } }, /user\.human\.email\.address/],
      [{ username: "x2" }, /user\.type/],
      [human("with space"), /user\.username/],
      [human("x3", { password: { password: "short" } }), /user\.human\.password\.password: The password needs at least 8 characters/],
      [human("x4", { password: { hashedPassword: "$md5$nope" } }), /user\.human\.password\.hashed_password/],
      [human("x5", { phone: { number: "0791234567" } }), /user\.human\.phone\.number/],
      [
        { ...human("x6"), human: { profile: { givenName: "A", familyName: "B", preferredLanguage: "english" }, email: { address: "a@b.c" } } },
        /preferred_language/,
      ],
    ];
    for (const [body, message] of cases) {
      const r = await post(`/users?ctx.org_id=${orgA}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    expect(await t.server.db.prisma.user.count()).toBe(before);
  });

  it("patch is partial, and succeeds without a change (same sequence)", async () => {
    const id = await createUser(human("patchme"));
    const patch = (body: object) => rest(t.url, "PATCH", `/resources/v3alpha/users/${id}`, { token: t.adminPat, body });
    const first = await patch({ human: { nickName: "pm", email: { address: "new@example.com" } } });
    expect(first.status).toBe(200);
    const u = (await get(`/users/${id}`)).body.user;
    expect(u.human.profile).toMatchObject({ givenName: "Ada", nickName: "pm" });
    expect(u.human.email).toMatchObject({ address: "new@example.com", isVerified: false });
    const same = await patch({ human: { nickName: "pm" } });
    expect(same.body.details.sequence).toBe(first.body.details.sequence);
    // a machine patch on a human is refused
    expect((await patch({ machine: { name: "x" } })).status).toBe(400);
  });

  it("lock, unlock, deactivate, reactivate change the state; a locked machine's PAT stops working", async () => {
    const id = await createUser(machine("stateful"));
    const pat = (await post(`/users/${id}/pats`, {})).body.token as string;
    const works = async () => (await rest(t.url, "GET", "/settings/v3alpha/languages", { token: pat })).status;
    await t.server.db.prisma.membership.create({
      data: { instanceId: t.instanceId, userId: id, contextType: "instance", contextId: t.instanceId, roles: ["IAM_OWNER_VIEWER"] },
    });
    expect(await works()).toBe(200);
    const state = async () => (await get(`/users/${id}`)).body.user.state;
    expect((await post(`/users/${id}/_lock`)).status).toBe(200);
    expect(await state()).toBe("USER_STATE_LOCKED");
    expect(await works()).toBe(401);
    expect((await post(`/users/${id}/_lock`)).status).toBe(200); // again: no change
    expect((await post(`/users/${id}/_reactivate`)).status).toBe(400); // not inactive
    expect((await post(`/users/${id}/_unlock`)).status).toBe(200);
    expect(await state()).toBe("USER_STATE_ACTIVE");
    expect(await works()).toBe(200);
    expect((await post(`/users/${id}/_deactivate`)).status).toBe(200);
    expect(await state()).toBe("USER_STATE_INACTIVE");
    expect(await works()).toBe(401);
    expect((await post(`/users/${id}/_reactivate`)).status).toBe(200);
    expect(await state()).toBe("USER_STATE_ACTIVE");
  });

  it("machine credentials: a client secret and a PAT returned once, a key file whose key signs for the stored public key", async () => {
    const id = await createUser(machine("creds"));
    const secret = await post(`/users/${id}/_generate_secret`);
    expect(secret.body).toMatchObject({ clientId: "creds" });
    expect(secret.body.clientSecret.length).toBeGreaterThanOrEqual(43);
    expect((await get(`/users/${id}`)).body.user.machine.hasSecret).toBe(true);
    const row = await t.server.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect(row.secretHash).not.toContain(secret.body.clientSecret);
    expect((await verifyPassword(secret.body.clientSecret, row.secretHash!)).valid).toBe(true);

    const key = await post(`/users/${id}/keys`, { expirationDate: new Date(Date.now() + 86400_000).toISOString() });
    expect(key.status).toBe(201);
    const file = JSON.parse(key.body.keyContent);
    expect(file).toMatchObject({ type: "serviceaccount", keyId: key.body.keyId, userId: id });
    const stored = await t.server.db.prisma.machineKey.findUniqueOrThrow({ where: { id: key.body.keyId } });
    const signature = sign("sha256", Buffer.from("hello"), createPrivateKey(file.key));
    expect(verify("sha256", Buffer.from("hello"), createPublicKey(stored.publicKey), signature)).toBe(true);
    expect(JSON.stringify(await t.server.db.prisma.event.findMany({ where: { aggregateId: id }, select: { payload: true } }))).not.toContain("PRIVATE KEY");

    const pat = await post(`/users/${id}/pats`, {});
    expect(pat.status).toBe(201);
    const listed = (await get(`/users/${id}/credentials`)).body.result.map((c: { kind: string }) => c.kind);
    expect(listed).toEqual(["key", "pat"]);
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/users/${id}/pats/${pat.body.tokenId}`, { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: pat.body.token })).status).toBe(401);
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/users/${id}/keys/${key.body.keyId}`, { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/users/${id}/keys/${key.body.keyId}`, { token: t.adminPat })).status).toBe(404);
    expect((await post(`/users/${id}/_remove_secret`)).status).toBe(200);
    expect((await get(`/users/${id}`)).body.user.machine.hasSecret).toBe(false);
    // humans have no machine credentials
    const h = await createUser(human("no-keys"));
    expect((await post(`/users/${h}/_generate_secret`)).status).toBe(400);
  });

  it("search: filters, sorting, paging, and only the users the caller may read", async () => {
    for (const n of ["s-one", "s-two", "s-three"]) await createUser(human(n), orgB);
    const search = (body: object, token = t.adminPat) => post(`/users/_search`, body, token);
    const names = (r: { body: { result: { username: string }[] } }) => r.body.result.map((u) => u.username);
    const byName = await search({
      filters: [{ username: { username: "s-", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }],
      sortingColumn: "USER_FIELD_NAME_USERNAME",
      query: { asc: true },
    });
    expect(names(byName)).toEqual(["s-one", "s-three", "s-two"]);
    expect(byName.body.details).toMatchObject({ totalResult: "3", appliedLimit: 100, endOfList: true });
    const page = await search({
      filters: [{ organizationId: { organizationId: orgB } }],
      sortingColumn: "USER_FIELD_NAME_USERNAME",
      query: { limit: 2, offset: 1, asc: true },
    });
    expect(names(page)).toEqual(["s-three", "s-two"]);
    expect(page.body.details.endOfList).toBe(true);
    expect(names(await search({ filters: [{ type: { type: "USER_TYPE_MACHINE" } }, { username: { username: "creds" } }] }))).toEqual(["creds"]);
    expect((await search({ query: { limit: 1001 } })).status).toBe(400);
    // the owner of organisation A sees A's users only, also when searching the whole instance
    const mine = await search({ query: { limit: 1000 } }, ownerA.token);
    expect(mine.status).toBe(200);
    const owners = new Set(mine.body.result.map((u: { details: { resourceOwner: { id: string } } }) => u.details.resourceOwner.id));
    expect([...owners]).toEqual([orgA]);
    expect((await post(`/users/_search?ctx.org_id=${orgB}`, {}, ownerA.token)).status).toBe(403);
  });

  it("permissions: an organisation owner manages its own users, not those of another organisation", async () => {
    const inB = await createUser(human("in-b"), orgB);
    const inA = await createUser(human("in-a"));
    expect((await get(`/users/${inA}`, ownerA.token)).status).toBe(200);
    expect((await get(`/users/${inB}`, ownerA.token)).status).toBe(403);
    expect((await post(`/users/${inB}/_lock`, undefined, ownerA.token)).status).toBe(403);
    expect((await post(`/users?ctx.org_id=${orgB}`, human("sneaky"), ownerA.token)).status).toBe(403);
    expect((await post(`/users?ctx.org_id=${orgA}`, human("welcome"), ownerA.token)).status).toBe(201);
    expect((await get(`/users/404404`)).status).toBe(404);
    const api = connectClient(UserService, t.url);
    await expectCode(api.getUser({ id: inA }), Code.Unauthenticated);
  });

  it("delete removes the user with its credentials and memberships", async () => {
    const id = await createUser(machine("doomed"));
    const pat = (await post(`/users/${id}/pats`, {})).body.token as string;
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/users/${id}`, { token: t.adminPat })).status).toBe(200);
    expect((await get(`/users/${id}`)).status).toBe(404);
    expect((await rest(t.url, "GET", "/settings/v3alpha/languages", { token: pat })).status).toBe(401);
    expect(await t.server.db.prisma.personalAccessToken.count({ where: { userId: id } })).toBe(0);
    // the name is free again
    await createUser(machine("doomed"));
  });
});
