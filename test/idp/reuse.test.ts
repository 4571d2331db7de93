import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnerType } from "../../gen/svc/object/v3alpha/object_pb.js";
import { IdentityProviderService } from "../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { IDPFieldName } from "../../gen/svc/resources/idp/v3alpha/idp_pb.js";
import { State, StatePolicy } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let api: ReturnType<typeof connectClient<typeof IdentityProviderService>>;
let orgA: string;
let orgB: string;
let sys: string; // owned by the system
let inst: string; // owned by the instance
let ownA: string; // owned by organisation A
let ownB: string; // owned by organisation B

const ctxSystem = { owner: { case: "system" as const, value: true } };
const ctxOrg = (id: string) => ({ owner: { case: "orgId" as const, value: id } });
const gitlab = (name: string, policy = StatePolicy.ACTIVATE) => ({
  idp: { name, statePolicy: policy, options: { isLinkingAllowed: true, autoLinking: 2 } },
  config: { clientId: `${name}-client`, scopes: ["openid", "profile"], clientSecret: "s3cret-value" },
});

beforeAll(async () => {
  t = await startTestServer();
  api = connectClient(IdentityProviderService, t.url, t.adminPat);
  orgA = await t.org("Org A");
  orgB = await t.org("Org B");
  sys = (await api.createGitLabIDP({ ctx: ctxSystem, idp: gitlab("sys") })).details!.id;
  inst = (await api.createGitLabIDP({ idp: gitlab("inst") })).details!.id;
  ownA = (await api.createGitLabIDP({ ctx: ctxOrg(orgA), idp: gitlab("own-a") })).details!.id;
  ownB = (await api.createGitLabIDP({ ctx: ctxOrg(orgB), idp: gitlab("own-b") })).details!.id;
});
afterAll(() => t?.close());

const search = async (ctx?: object, filters: object[] = []) => {
  const r = await api.searchIDPs({ ...(ctx ? { ctx } : {}), filters: filters as never, sortingColumn: IDPFieldName.IDP_FIELD_NAME_NAME, query: { asc: true } });
  return Object.fromEntries(r.result.map((x) => [x.idp!.name, x]));
};
const seen = async (id: string, ctx?: object) => (await api.getGitLabIDP({ id, ...(ctx ? { ctx } : {}) })).idp!;

describe("identity providers reused across system > instance > organisations", () => {
  it("are visible in every context below their owner; search returns own, inherited and children's", async () => {
    expect(Object.keys(await search(ctxOrg(orgA)))).toEqual(["inst", "own-a", "sys"]);
    expect(Object.keys(await search(ctxOrg(orgB)))).toEqual(["inst", "own-b", "sys"]);
    expect(Object.keys(await search())).toEqual(["inst", "own-a", "own-b", "sys"]);
    expect(Object.keys(await search(ctxSystem))).toEqual(["inst", "own-a", "own-b", "sys"]);
    // not visible from a sibling: NOT_FOUND
    await expectCode(api.getGitLabIDP({ id: ownA, ctx: ctxOrg(orgB) }), Code.NotFound);
    const a = (await search(ctxOrg(orgA))).sys!;
    expect(a.details!.resourceOwner).toMatchObject({ type: OwnerType.SYSTEM });
    expect(a.type).toBe(8);
  });

  it("follow the policies down the chain: inactive yet visible, activated, deactivated, back to inherit", async () => {
    await api.patchGitLabIDP({ id: inst, idp: { idp: { statePolicy: StatePolicy.DEACTIVATE } } });
    let inA = await seen(inst, ctxOrg(orgA));
    expect(inA.state).toBe(State.EFFECTIVE_STATE_INACTIVE);
    expect(inA.idp!.idp!.statePolicy).toBe(StatePolicy.INHERIT);
    expect(inA.parent).toMatchObject({ parent: { type: OwnerType.INSTANCE, id: t.instanceId }, state: State.EFFECTIVE_STATE_INACTIVE });
    expect(inA.idp!.idp!.name).toBe("inst");

    await api.patchGitLabIDP({ id: inst, ctx: ctxOrg(orgA), idp: { idp: { statePolicy: StatePolicy.ACTIVATE } } });
    inA = await seen(inst, ctxOrg(orgA));
    expect(inA.state).toBe(State.EFFECTIVE_STATE_ACTIVE);
    expect(inA.idp!.idp!.statePolicy).toBe(StatePolicy.ACTIVATE);
    expect(inA.parent!.state).toBe(State.EFFECTIVE_STATE_INACTIVE);
    expect((await seen(inst, ctxOrg(orgB))).state).toBe(State.EFFECTIVE_STATE_INACTIVE);
    // the owner's own view is unchanged
    const own = await seen(inst);
    expect(own.state).toBe(State.EFFECTIVE_STATE_INACTIVE);
    expect(own.idp!.idp!.statePolicy).toBe(StatePolicy.DEACTIVATE);
    expect(own.parent).toBeUndefined();

    await api.patchGitLabIDP({ id: inst, idp: { idp: { statePolicy: StatePolicy.ACTIVATE } } });
    await api.patchGitLabIDP({ id: inst, ctx: ctxOrg(orgB), idp: { idp: { statePolicy: StatePolicy.DEACTIVATE } } });
    expect((await seen(inst, ctxOrg(orgB))).state).toBe(State.EFFECTIVE_STATE_INACTIVE);
    expect((await seen(inst, ctxOrg(orgA))).state).toBe(State.EFFECTIVE_STATE_ACTIVE);

    const back = await api.patchGitLabIDP({ id: inst, ctx: ctxOrg(orgB), idp: { idp: { statePolicy: StatePolicy.INHERIT } } });
    const inB = await seen(inst, ctxOrg(orgB));
    expect(inB.state).toBe(State.EFFECTIVE_STATE_ACTIVE);
    expect(inB.idp!.idp!.statePolicy).toBe(StatePolicy.INHERIT);
    expect(inB.details!.sequence).toBe(back.details!.sequence);
    expect(inB.details!.changeDate).toEqual(back.details!.changeDate);
  });

  it("pass a system provider's state through the instance's policy to the organisations", async () => {
    await api.patchGitLabIDP({ id: sys, idp: { idp: { statePolicy: StatePolicy.DEACTIVATE } } });
    expect((await seen(sys, ctxOrg(orgA))).state).toBe(State.EFFECTIVE_STATE_INACTIVE);
    await api.patchGitLabIDP({ id: sys, ctx: { owner: { case: "instanceId", value: t.instanceId } }, idp: { idp: { statePolicy: StatePolicy.ACTIVATE } } });
    const inA = await seen(sys, ctxOrg(orgA));
    expect(inA.state).toBe(State.EFFECTIVE_STATE_ACTIVE);
    expect(inA.parent).toMatchObject({ parent: { type: OwnerType.INSTANCE }, state: State.EFFECTIVE_STATE_ACTIVE });
    const inInstance = await seen(sys, { owner: { case: "instanceId", value: t.instanceId } });
    expect(inInstance.parent).toMatchObject({ parent: { type: OwnerType.SYSTEM }, state: State.EFFECTIVE_STATE_INACTIVE });
    await api.patchGitLabIDP({ id: sys, ctx: ctxOrg(orgA), idp: { idp: { statePolicy: StatePolicy.DEACTIVATE } } });
    expect((await seen(sys, ctxOrg(orgA))).state).toBe(State.EFFECTIVE_STATE_INACTIVE);
    expect((await seen(sys, ctxOrg(orgB))).state).toBe(State.EFFECTIVE_STATE_ACTIVE);
  });

  it("filter by the state seen from the context, by ID and by name", async () => {
    const activeInA = await search(ctxOrg(orgA), [{ filter: { case: "state", value: { state: State.EFFECTIVE_STATE_ACTIVE } } }]);
    const inactiveInA = await search(ctxOrg(orgA), [{ filter: { case: "state", value: { state: State.EFFECTIVE_STATE_INACTIVE } } }]);
    expect(Object.keys(activeInA)).toEqual(["inst", "own-a"]);
    expect(Object.keys(inactiveInA)).toEqual(["sys"]);
    expect(Object.keys(await search(ctxOrg(orgB), [{ filter: { case: "state", value: { state: State.EFFECTIVE_STATE_ACTIVE } } }]))).toEqual([
      "inst",
      "own-b",
      "sys",
    ]);
    expect(Object.keys(await search(undefined, [{ filter: { case: "id", value: { id: ownB } } }]))).toEqual(["own-b"]);
    expect(Object.keys(await search(undefined, [{ filter: { case: "name", value: { name: "OWN", method: 3 } } }]))).toEqual(["own-a", "own-b"]);
    const paged = await api.searchIDPs({ sortingColumn: IDPFieldName.IDP_FIELD_NAME_NAME, query: { limit: 2, offset: 1n, asc: true } });
    expect(paged.result.map((r) => r.idp!.name)).toEqual(["own-a", "own-b"]);
    expect(paged.details).toMatchObject({ appliedLimit: 2, totalResult: 4n, endOfList: false });
    await expectCode(api.searchIDPs({ filters: [{ filter: { case: "state", value: { state: 7 as State } } }] }), Code.InvalidArgument);
    await expectCode(api.searchIDPs({ filters: [{ filter: { case: "state", value: { state: State.EFFECTIVE_STATE_UNSPECIFIED } } }] }), Code.InvalidArgument);
  });

  it("keep the configuration read-only in child contexts, writable in the owner", async () => {
    const err = await expectCode(api.patchGitLabIDP({ id: inst, ctx: ctxOrg(orgA), idp: { idp: { name: "renamed" } } }), Code.FailedPrecondition);
    expect(err.rawMessage).toContain("read-only");
    await expectCode(
      api.patchGitLabIDP({ id: sys, ctx: ctxOrg(orgA), idp: { config: { clientId: "x", scopes: [], replaceScopes: false } } }),
      Code.FailedPrecondition,
    );
    const before = await seen(inst);
    const renamed = await api.patchGitLabIDP({ id: inst, idp: { idp: { name: "inst" }, config: { scopes: ["openid"], replaceScopes: true } } });
    expect(renamed.details!.sequence).toBe(before.details!.sequence + 1n);
    const after = await seen(inst);
    expect(after.idp!.config).toMatchObject({ clientId: "inst-client", scopes: ["openid"], hasClientSecret: true });
    // nothing changes: no event
    const same = await api.patchGitLabIDP({ id: inst, idp: { idp: { name: "inst" } } });
    expect(same.details!.sequence).toBe(renamed.details!.sequence);
    await expectCode(api.patchGitLabIDP({ id: inst, idp: { idp: { statePolicy: StatePolicy.INHERIT } } }), Code.InvalidArgument);
  });

  it("keep the client secret write-only and encrypted at rest", async () => {
    const row = await t.server.db.prisma.idp.findUniqueOrThrow({ where: { id: inst } });
    expect(row.secret).toMatch(/^v1\./);
    const events = await t.server.db.prisma.event.findMany({ where: { aggregateId: inst } });
    expect(JSON.stringify(events.map((e) => e.payload))).not.toContain("s3cret-value");
    const viaRest = await rest(t.url, "GET", `/resources/v3alpha/idps/gitlab/${inst}`, { token: t.adminPat });
    expect(JSON.stringify(viaRest.body)).not.toContain("s3cret");
    expect(viaRest.body.idp.idp.config.hasClientSecret).toBe(true);
  });

  it("deny an organisation owner what belongs to another organisation", async () => {
    const { token } = await t.serviceUser("idp-owner-b", [{ type: "org", id: orgB, roles: ["ORG_OWNER"] }]);
    const b = connectClient(IdentityProviderService, t.url, token);
    await expectCode(b.getGitLabIDP({ id: ownA }), Code.PermissionDenied);
    await expectCode(b.searchIDPs({ ctx: ctxOrg(orgA) }), Code.PermissionDenied);
    await expectCode(b.patchGitLabIDP({ id: inst, ctx: ctxOrg(orgA), idp: { idp: { statePolicy: StatePolicy.DEACTIVATE } } }), Code.PermissionDenied);
    await expectCode(b.deleteIDP({ id: ownA }), Code.PermissionDenied);
    // but manages its own organisation: its providers, and its policy for inherited ones
    expect(
      Object.keys(await (async () => Object.fromEntries((await b.searchIDPs({ ctx: ctxOrg(orgB) })).result.map((x) => [x.idp!.name, 1])))()).sort(),
    ).toEqual(["inst", "own-b", "sys"]);
    await b.patchGitLabIDP({ id: inst, ctx: ctxOrg(orgB), idp: { idp: { statePolicy: StatePolicy.DEACTIVATE } } });
    await b.patchGitLabIDP({ id: ownB, idp: { idp: { name: "own-b" } } });
    // the instance's configuration is not the organisation's to change
    await expectCode(b.patchGitLabIDP({ id: inst, idp: { idp: { name: "hijack" } } }), Code.PermissionDenied);
  });

  it("are deleted from every context with their policies", async () => {
    const policies = await t.server.db.prisma.idpPolicy.count({ where: { idpId: inst } });
    expect(policies).toBeGreaterThan(0);
    await api.deleteIDP({ id: inst });
    expect(await t.server.db.prisma.idpPolicy.count({ where: { idpId: inst } })).toBe(0);
    for (const ctx of [undefined, ctxOrg(orgA), ctxOrg(orgB), ctxSystem]) expect(Object.keys(await search(ctx))).not.toContain("inst");
    await expectCode(api.getGitLabIDP({ id: inst }), Code.NotFound);
    await expectCode(api.deleteIDP({ id: inst }), Code.NotFound);
  });
});

describe("identity providers over REST", () => {
  it("are created (201), read, patched, searched in both body forms and deleted at the contract's paths", async () => {
    const ok = await rest(t.url, "POST", `/resources/v3alpha/idps/gitlab?ctx.org_id=${orgA}`, {
      token: t.adminPat,
      body: {
        idp: { name: "rest-idp", options: { isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_USERNAME" } },
        config: { clientId: "c", scopes: ["openid"] },
      },
    });
    expect(ok.status).toBe(201);
    const id = ok.body.details.id;
    expect(ok.body.details.resourceOwner).toEqual({ type: "OWNER_TYPE_ORG", id: orgA });
    const got = await rest(t.url, "GET", `/resources/v3alpha/idps/gitlab/${id}`, { token: t.adminPat });
    expect(got.body.idp).toMatchObject({
      state: "EFFECTIVE_STATE_ACTIVE",
      type: "PROVIDER_TYPE_GITLAB",
      idp: { idp: { name: "rest-idp", statePolicy: "STATE_POLICY_ACTIVATE" } },
    });
    expect(got.body.idp.idp.idp.options).toMatchObject({ isAutoCreation: true, autoLinking: "AUTO_LINKING_OPTION_USERNAME" });
    const patched = await rest(t.url, "PATCH", `/resources/v3alpha/idps/gitlab/${id}`, {
      token: t.adminPat,
      body: { idp: { statePolicy: "STATE_POLICY_DEACTIVATE" } },
    });
    expect(patched.status).toBe(200);
    const arrayForm = await rest(t.url, "POST", `/resources/v3alpha/idps/_search?ctx.org_id=${orgA}&sorting_column=IDP_FIELD_NAME_NAME`, {
      token: t.adminPat,
      body: [{ state: { state: "EFFECTIVE_STATE_INACTIVE" } }],
    });
    expect(arrayForm.body.result.map((r: any) => r.idp.name)).toContain("rest-idp");
    const objectForm = await rest(t.url, "POST", "/resources/v3alpha/idps/_search", {
      token: t.adminPat,
      body: { ctx: { orgId: orgA }, filters: [{ name: { name: "rest-", method: "TEXT_FILTER_METHOD_STARTS_WITH" } }] },
    });
    expect(objectForm.body.result.map((r: any) => r.idp.name)).toEqual(["rest-idp"]);
    expect(objectForm.body.result[0].details.resourceOwner.type).toBe("OWNER_TYPE_ORG");
    const bad = await rest(t.url, "POST", "/resources/v3alpha/idps/gitlab", { token: t.adminPat, body: { idp: { name: "" }, config: {} } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("idp.idp.name");
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/idps/${id}`, { token: t.adminPat })).status).toBe(200);
    expect((await rest(t.url, "GET", `/resources/v3alpha/idps/gitlab/${id}`, { token: t.adminPat })).status).toBe(404);
  });
});
