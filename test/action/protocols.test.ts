import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { IdentityProviderService } from "../../gen/svc/resources/idp/v3alpha/idp_service_pb.js";
import { State } from "../../gen/svc/resources/object/v3alpha/object_pb.js";
import { call, expectCode, protocols } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const A = ActionService.method;
const I = IdentityProviderService.method;

describe.each(protocols)("resource services over %s", (protocol) => {
  const opts = () => ({ token: t.adminPat });

  it("manage targets and executions", async () => {
    const created = await call(
      protocol,
      t.url,
      ActionService,
      A.createTarget,
      create(A.createTarget.input, {
        target: { name: `p-${protocol}`, targetType: { case: "restWebhook", value: { url: "https://example.com" } }, timeout: { seconds: 3n } },
      }),
      opts(),
    );
    const id = created.details!.id;
    expect(created.signingKey).not.toBe("");
    const got = await call(protocol, t.url, ActionService, A.getTarget, create(A.getTarget.input, { id }), opts());
    expect(got.target!.target!.name).toBe(`p-${protocol}`);
    const found = await call(
      protocol,
      t.url,
      ActionService,
      A.searchTargets,
      create(A.searchTargets.input, { filters: [{ filter: { case: "inIds", value: { ids: [id] } } }] }),
      opts(),
    );
    expect(found.result.map((r) => r.details!.id)).toEqual([id]);
    const put = await call(
      protocol,
      t.url,
      ActionService,
      A.putExecution,
      create(A.putExecution.input, {
        execution: { condition: { conditionType: { case: "function", value: "preuserinfo" } }, targets: [id] },
      }),
      opts(),
    );
    expect(put.details!.id).toBe("function/preuserinfo");
    await call(protocol, t.url, ActionService, A.deleteTarget, create(A.deleteTarget.input, { id }), opts());
    await expectCode(call(protocol, t.url, ActionService, A.getTarget, create(A.getTarget.input, { id }), opts()), Code.NotFound);
    const bad = await expectCode(
      call(
        protocol,
        t.url,
        ActionService,
        A.createTarget,
        create(A.createTarget.input, { target: { name: "bad", targetType: { case: "restWebhook", value: { url: "no uri" } }, timeout: { seconds: 1n } } }),
        opts(),
      ),
      Code.InvalidArgument,
    );
    expect(bad.rawMessage).toContain("target.rest_webhook.url");
  });

  it("manage identity providers in an organisation context", async () => {
    const ctx = { owner: { case: "orgId" as const, value: t.defaultOrgId } };
    const created = await call(
      protocol,
      t.url,
      IdentityProviderService,
      I.createGitLabIDP,
      create(I.createGitLabIDP.input, {
        ctx,
        idp: { idp: { name: `gl-${protocol}` }, config: { clientId: "c", scopes: ["openid"] } },
      }),
      opts(),
    );
    const id = created.details!.id;
    const got = await call(protocol, t.url, IdentityProviderService, I.getGitLabIDP, create(I.getGitLabIDP.input, { id }), opts());
    expect(got.idp!.state).toBe(State.EFFECTIVE_STATE_ACTIVE);
    const found = await call(
      protocol,
      t.url,
      IdentityProviderService,
      I.searchIDPs,
      create(I.searchIDPs.input, { ctx, filters: [{ filter: { case: "id", value: { id } } }] }),
      opts(),
    );
    expect(found.result.map((r) => r.idp!.name)).toEqual([`gl-${protocol}`]);
    await call(protocol, t.url, IdentityProviderService, I.deleteIDP, create(I.deleteIDP.input, { id }), opts());
    await expectCode(call(protocol, t.url, IdentityProviderService, I.getGitLabIDP, create(I.getGitLabIDP.input, { id }), opts()), Code.NotFound);
  });
});
