import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { addHuman } from "../oidc/rp.js";

/** The links API: an administrator links and unlinks users' accounts at identity providers (contract, "Links"). */
let t: TestServer;
let idp: string;
let ada: string;
let bob: string;

const api = (method: string, path: string, body?: unknown) =>
  rest(t.url, method, `/resources/v3alpha${path}`, { token: t.adminPat, ...(body ? { body } : {}) });
const events = async (userId: string) =>
  (await t.server.db.prisma.event.findMany({ where: { aggregateId: userId }, orderBy: { position: "asc" } })).map((e) => e.type);

beforeAll(async () => {
  t = await startTestServer();
  const created = await api("POST", "/idps/gitlab", { idp: { name: "GitLab" }, config: { client_id: "gl", client_secret: "s" } });
  idp = created.body.details.id;
  ada = await addHuman(t, "ada", "Secr3t!pass");
  bob = await addHuman(t, "bob", "Secr3t!pass");
});
afterAll(() => t?.close());

describe("users' links to accounts at identity providers", () => {
  it("are added, searched and removed by an administrator; each a user.idp_link event", async () => {
    const added = await api("POST", `/users/${ada}/idp_links`, { idp_id: idp, user_id: "gl-1", user_name: "ada@gitlab" });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const found = await api("POST", `/users/${ada}/idp_links/_search`, {});
    expect(found.status).toBe(200);
    expect(found.body.result).toEqual([{ idpId: idp, userId: "gl-1", userName: "ada@gitlab" }]);
    expect(found.body.details).toMatchObject({ totalResult: "1" });
    // the same link again changes nothing
    const again = await api("POST", `/users/${ada}/idp_links`, { idp_id: idp, user_id: "gl-1", user_name: "ada@gitlab" });
    expect(again.body.details.sequence).toBe(added.body.details.sequence);

    const removed = await api("DELETE", `/users/${ada}/idp_links/${idp}/gl-1`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect((await api("POST", `/users/${ada}/idp_links/_search`, {})).body.result).toEqual([]);
    expect((await api("DELETE", `/users/${ada}/idp_links/${idp}/gl-1`)).status).toBe(404);
    expect(await events(ada)).toEqual(expect.arrayContaining(["user.idp_link.added", "user.idp_link.removed"]));
  });

  it("link one account to one user and a user to one account per provider; unknown providers and fields are named", async () => {
    expect((await api("POST", `/users/${ada}/idp_links`, { idp_id: idp, user_id: "gl-2" })).status).toBe(200);
    const other = await api("POST", `/users/${bob}/idp_links`, { idp_id: idp, user_id: "gl-2" });
    expect(other.status).toBe(409);
    expect(other.body.message).toContain("linked to another user");
    const second = await api("POST", `/users/${ada}/idp_links`, { idp_id: idp, user_id: "gl-3" });
    expect(second.status).toBe(409);
    const unknown = await api("POST", `/users/${bob}/idp_links`, { idp_id: "no-such-idp", user_id: "x" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain("no-such-idp");
    const missing = await api("POST", `/users/${bob}/idp_links`, { idp_id: idp });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("user_id");
    expect((await api("POST", "/users/no-such-user/idp_links", { idp_id: idp, user_id: "x" })).status).toBe(404);
  });

  it("go with their provider: deleting it removes its links", async () => {
    expect((await api("DELETE", `/idps/${idp}`)).status).toBe(200);
    expect((await api("POST", `/users/${ada}/idp_links/_search`, {})).body.result).toEqual([]);
  });
});
