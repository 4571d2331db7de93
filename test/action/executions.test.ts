import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { ExecutionType } from "../../gen/svc/resources/action/v3alpha/execution_pb.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let api: ReturnType<typeof connectClient<typeof ActionService>>;
let t1: string;
let t2: string;

const SVC = "svc.resources.action.v3alpha.ActionService";
const put = (body: object) => rest(t.url, "POST", "/resources/v3alpha/executions", { token: t.adminPat, body });
const newTarget = async (name: string) =>
  (await rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body: { name, restWebhook: { url: "https://example.com" }, timeout: "1s" } }))
    .body.details.id as string;

beforeAll(async () => {
  t = await startTestServer();
  api = connectClient(ActionService, t.url, t.adminPat);
  t1 = await newTarget("x1");
  t2 = await newTarget("x2");
});
afterAll(() => t?.close());

describe("executions", () => {
  it("are created (201) and updated (200) per condition, with IDs derived from the condition", async () => {
    const body = { condition: { request: { method: `/${SVC}/GetTarget` } }, targets: [t1] };
    const created = await put(body);
    expect(created.status).toBe(201);
    expect(created.body.details.id).toBe(`request/${SVC}/GetTarget`);
    const updated = await put({ ...body, targets: [t1, t2] });
    expect(updated.status).toBe(200);
    expect(updated.body.details.sequence).toBe("2");
    const unchanged = await put({ ...body, targets: [t1, t2] });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.details.sequence).toBe("2");

    const ids = [
      [{ request: { service: SVC } }, `request/${SVC}`],
      [{ request: { all: true } }, "request"],
      [{ response: { method: `${SVC}/SearchTargets` } }, `response/${SVC}/SearchTargets`],
      [{ response: { all: true } }, "response"],
      [{ function: "preuserinfo" }, "function/preuserinfo"],
      [{ event: { event: "action.target.added" } }, "event/action.target.added"],
      [{ event: { group: "action.target" } }, "event/action.target.*"],
      [{ event: { all: true } }, "event"],
    ] as const;
    for (const [condition, id] of ids) {
      const r = await put({ condition, targets: [t1] });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.details.id).toBe(id);
    }
    // round trip: the stored condition reads back as it was given
    const found = await api.searchExecutions({
      filters: [
        {
          filter: {
            case: "inConditions",
            value: { conditions: [{ conditionType: { case: "event", value: { condition: { case: "group", value: "action.target" } } } }] },
          },
        },
      ],
    });
    expect(found.result[0]!.execution!.condition!.conditionType).toMatchObject({
      case: "event",
      value: { condition: { case: "group", value: "action.target" } },
    });
  });

  it("refuse unknown methods, services, functions and events, and missing targets or includes", async () => {
    const bad: [object, number, string][] = [
      [{ condition: { request: { method: "/no.Such/Method" } }, targets: [t1] }, 400, "execution.condition.request.method"],
      [{ condition: { response: { service: "no.Such" } }, targets: [t1] }, 400, "execution.condition.response.service"],
      [{ condition: { function: "nope" }, targets: [t1] }, 400, "execution.condition.function"],
      [{ condition: { event: { event: "no.such.event" } }, targets: [t1] }, 400, "execution.condition.event.event"],
      [{ condition: { event: { group: "nosuch" } }, targets: [t1] }, 400, "execution.condition.event.group"],
      [{ condition: {}, targets: [t1] }, 400, "execution.condition.condition_type"],
      [{ condition: { request: {} }, targets: [t1] }, 400, "execution.condition.request.condition"],
      [{ condition: { request: { method: "x".repeat(1001) } }, targets: [t1] }, 400, "execution.condition.request.method"],
      [{ condition: { request: { all: true } }, targets: ["424242"] }, 404, "424242"],
      [{ condition: { request: { all: true } }, targets: [] }, 400, "at least one target"],
      [{ condition: { request: { service: SVC } }, includes: ["request/does.not.Exist"] }, 404, "request/does.not.Exist"],
      [{ condition: { request: { service: SVC } }, includes: ["event"] }, 400, "not a request execution"],
    ];
    for (const [body, status, text] of bad) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.message).toContain(text);
    }
  });

  it("refuse include cycles", async () => {
    expect((await put({ condition: { request: { method: `/${SVC}/PatchTarget` } }, targets: [t1] })).status).toBe(201);
    expect((await put({ condition: { request: { service: SVC } }, includes: [`request/${SVC}/PatchTarget`] })).status).toBe(200);
    const cycle = await put({ condition: { request: { method: `/${SVC}/PatchTarget` } }, targets: [t1], includes: [`request/${SVC}`] });
    expect(cycle.status).toBe(400);
    expect(cycle.body.message).toContain("itself");
    const self = await put({ condition: { request: { all: true } }, targets: [t1], includes: ["request"] });
    expect(self.status).toBe(400);
  });

  it("are found with each of the four filters", async () => {
    const byType = await api.searchExecutions({ filters: [{ filter: { case: "executionType", value: { type: ExecutionType.EVENT } } }] });
    expect(byType.result.map((r) => r.details!.id).sort()).toEqual(["event", "event/action.target.*", "event/action.target.added"]);
    const byTarget = await api.searchExecutions({ filters: [{ filter: { case: "target", value: { id: t2 } } }] });
    expect(byTarget.result.map((r) => r.details!.id)).toEqual([`request/${SVC}/GetTarget`]);
    const byInclude = await api.searchExecutions({ filters: [{ filter: { case: "include", value: { include: `request/${SVC}/PatchTarget` } } }] });
    expect(byInclude.result.map((r) => r.details!.id)).toEqual([`request/${SVC}`]);
    const byConditions = await api.searchExecutions({
      filters: [
        {
          filter: {
            case: "inConditions",
            value: {
              conditions: [
                { conditionType: { case: "function", value: "preuserinfo" } },
                { conditionType: { case: "request", value: { condition: { case: "all", value: true } } } },
              ],
            },
          },
        },
      ],
    });
    expect(byConditions.result.map((r) => r.details!.id).sort()).toEqual(["function/preuserinfo", "request"]);
    const all = await api.searchExecutions({ query: { limit: 3 } });
    expect(all.details).toMatchObject({ appliedLimit: 3, endOfList: false });
    expect(all.details!.totalResult).toBeGreaterThan(3n);
    const r = await rest(t.url, "POST", "/resources/v3alpha/executions/_search", {
      token: t.adminPat,
      body: [{ executionType: { type: "EXECUTION_TYPE_FUNCTION" } }],
    });
    expect(r.body.result.map((x: any) => x.details.id)).toEqual(["function/preuserinfo"]);
  });

  it("lose a deleted target, and an execution left with nothing is removed", async () => {
    const tmp = await newTarget("x-temp");
    expect((await put({ condition: { response: { service: SVC } }, targets: [tmp, t1] })).status).toBe(201);
    expect((await put({ condition: { response: { method: `/${SVC}/GetTarget` } }, targets: [tmp] })).status).toBe(201);
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/targets/${tmp}`, { token: t.adminPat })).status).toBe(200);
    const left = await api.searchExecutions({ filters: [{ filter: { case: "executionType", value: { type: ExecutionType.RESPONSE } } }] });
    const byId = Object.fromEntries(left.result.map((r) => [r.details!.id, r.execution!.targets]));
    expect(byId[`response/${SVC}`]).toEqual([t1]);
    expect(byId[`response/${SVC}/GetTarget`]).toBeUndefined();
    expect((await api.searchExecutions({ filters: [{ filter: { case: "target", value: { id: tmp } } }] })).result).toEqual([]);
  });

  it("are deleted by their URL-encoded ID, and taken out of the executions that include them", async () => {
    const id = `request/${SVC}/PatchTarget`;
    const r = await rest(t.url, "DELETE", `/resources/v3alpha/executions/${encodeURIComponent(id)}`, { token: t.adminPat });
    expect(r.status).toBe(200);
    expect(r.body.details.id).toBe(id);
    // request/<service> only included it: left with nothing, it is gone too
    const ids = (await api.searchExecutions({ filters: [{ filter: { case: "executionType", value: { type: ExecutionType.REQUEST } } }] })).result.map(
      (x) => x.details!.id,
    );
    expect(ids).not.toContain(id);
    expect(ids).not.toContain(`request/${SVC}`);
    expect((await rest(t.url, "DELETE", `/resources/v3alpha/executions/${encodeURIComponent(id)}`, { token: t.adminPat })).status).toBe(404);
  });

  it("list every method and service the server mounts, this service included, and the functions it invokes", async () => {
    const methods = (await api.listAvailableExecutionMethods({})).methods;
    expect(methods).toContain(`/${SVC}/CreateTarget`);
    expect(methods).toContain("/svc.settings.language.v3alpha.LanguageSettingsService/SetLanguages");
    expect([...methods].sort()).toEqual(methods);
    const services = (await rest(t.url, "GET", "/resources/v3alpha/executions/services", { token: t.adminPat })).body.services;
    expect(services).toEqual(expect.arrayContaining([SVC, "svc.feature.v2.FeatureService", "grpc.health.v1.Health"]));
    expect((await api.listAvailableExecutionFunctions({})).functions).toEqual(["preaccesstoken", "preuserinfo"]);
    const { token } = await t.serviceUser("exec-outsider");
    await expectCode(connectClient(ActionService, t.url, token).listAvailableExecutionMethods({}), Code.PermissionDenied);
  });
});
