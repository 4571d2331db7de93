import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let org: string;
beforeAll(async () => {
  t = await startTestServer();
  org = await t.org("Settings Org");
});
afterAll(() => t?.close());

const patch = (path: string, body: object, query = "", token = t.adminPat) => rest(t.url, "PATCH", `/settings/v3alpha/${path}${query}`, { token, body });
const read = (path: string, query = "") => rest(t.url, "GET", `/settings/v3alpha/${path}${query}`, { token: t.adminPat });

describe("login, password complexity and lockout settings", () => {
  it("start from built-in defaults owned by the system, are set per instance and overridden or reset per organisation", async () => {
    const defaults = await read("password_complexity");
    expect(defaults.body.settings).toMatchObject({ minLength: { value: "8", owner: { type: "OWNER_TYPE_SYSTEM" } }, hasSymbol: { value: true } });
    expect((await patch("password_complexity", { minLength: { set: 12 }, hasSymbol: { set: false } })).status).toBe(200);
    expect((await patch("password_complexity", { minLength: { set: 16 } }, `?ctx.org_id=${org}`)).status).toBe(200);
    const inOrg = (await read("password_complexity", `?ctx.org_id=${org}`)).body.settings;
    expect(inOrg.minLength).toEqual({ value: "16" });
    expect(inOrg.hasSymbol).toEqual({ value: false, owner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId } });
    expect((await patch("password_complexity", { minLength: { reset: true } }, `?ctx.org_id=${org}`)).status).toBe(200);
    expect((await read("password_complexity", `?ctx.org_id=${org}`)).body.settings.minLength).toEqual({
      value: "12",
      owner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId },
    });
  });

  it("apply to new passwords of the organisation's users", async () => {
    await patch("password_complexity", { minLength: { set: 20 } }, `?ctx.org_id=${org}`);
    const user = (password: string, o = org) =>
      rest(t.url, "POST", `/resources/v3alpha/users?ctx.org_id=${o}`, {
        token: t.adminPat,
        body: {
          username: `u${Math.random()}`.slice(0, 12),
          human: { profile: { givenName: "A", familyName: "B" }, email: { address: "a@b.ch" }, password: { password } },
        },
      });
    expect((await user("Longer!pass12")).body.message).toMatch(/at least 20 characters/);
    expect((await user("Longer!pass12", t.defaultOrgId)).status).toBe(201); // the instance asks for 12
  });

  it("refuse bad values naming the field, and writers without the settings permission", async () => {
    expect((await patch("lockout", { maxPasswordAttempts: { set: 5000 } })).body.message).toMatch(
      /settings\.max_password_attempts\.set: must be between 0 and 1000/,
    );
    expect((await patch("password_complexity", { minLength: { set: 0 } })).status).toBe(400);
    expect((await patch("login", { allowRegister: { reset: false } })).status).toBe(400);
    const viewer = await t.serviceUser("settings-viewer", [{ type: "instance", id: t.instanceId, roles: ["IAM_OWNER_VIEWER"] }]);
    expect((await patch("lockout", { maxPasswordAttempts: { set: 3 } }, "", viewer.token)).status).toBe(403);
    expect((await read("lockout")).body.settings.maxPasswordAttempts).toEqual({ value: "5", owner: { type: "OWNER_TYPE_SYSTEM", id: "" } });
    // a built-in value is the system's, read in the system context too (it was not set there)
    expect((await read("login", "?ctx.system=true")).body.settings.allowRegister).toEqual({ value: false, owner: { type: "OWNER_TYPE_SYSTEM", id: "" } });
  });
});
