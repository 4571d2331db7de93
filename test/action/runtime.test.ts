import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { call, connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer, verifySignature, type Behaviour } from "../support/targets.js";
import { create } from "@bufbuild/protobuf";

let t: TestServer;
let api: ReturnType<typeof connectClient<typeof ActionService>>;
let lang: ReturnType<typeof connectClient<typeof LanguageSettingsService>>;
const LANG = "svc.settings.language.v3alpha.LanguageSettingsService";
const receivers: TargetServer[] = [];

beforeAll(async () => {
  t = await startTestServer();
  api = connectClient(ActionService, t.url, t.adminPat);
  lang = connectClient(LanguageSettingsService, t.url, t.adminPat);
});
afterAll(() => t?.close());
afterEach(async () => {
  // each test leaves no execution behind
  const all = await api.searchExecutions({ query: { limit: 1000 } });
  for (const x of all.result) await api.deleteExecution({ id: x.details!.id }).catch(() => {});
  for (const r of receivers.splice(0)) await r.stop();
});

async function receiver(behaviour?: Behaviour) {
  const r = await new TargetServer(behaviour).start();
  receivers.push(r);
  return r;
}

type Kind = { type?: "webhook" | "rr"; timeout?: string; mode?: "async" | "interrupt" };
let n = 0;
async function target(r: TargetServer, kind: Kind = {}) {
  const body: Record<string, unknown> = {
    name: `rt-${n++}`,
    [kind.type === "rr" ? "restRequestResponse" : "restWebhook"]: { url: r.url },
    timeout: kind.timeout ?? "5s",
  };
  if (kind.mode === "async") body.isAsync = true;
  if (kind.mode === "interrupt") body.interruptOnError = true;
  const res = await rest(t.url, "POST", "/resources/v3alpha/targets", { token: t.adminPat, body });
  expect(res.status).toBe(201);
  return { id: res.body.details.id as string, key: res.body.signingKey as string };
}

async function onRequest(method: string, targets: string[], includes: string[] = []) {
  const condition = method === "all" ? { request: { all: true } } : method.includes("/") ? { request: { method } } : { request: { service: method } };
  const res = await rest(t.url, "POST", "/resources/v3alpha/executions", { token: t.adminPat, body: { condition, targets, includes } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

describe("request and response executions", () => {
  it("POST the contract's payload with a signature the receiver can verify", async () => {
    const r = await receiver();
    const { id, key } = await target(r);
    await onRequest(`/${LANG}/SetLanguages`, [id]);
    await lang.setLanguages({ settings: { defaultLanguage: { key: "de" } } });
    const [got] = await r.waitFor(1);
    expect(verifySignature(key, got!.signature, got!.raw)).toBe(true);
    expect(verifySignature("another key", got!.signature, got!.raw)).toBe(false);
    expect(got!.body).toEqual({
      fullMethod: `/${LANG}/SetLanguages`,
      instanceID: t.instanceId,
      orgID: t.defaultOrgId,
      projectID: "",
      userID: expect.any(String),
      request: { settings: { defaultLanguage: { key: "de" } } },
    });
  });

  it("run on every protocol, REST included", async () => {
    const r = await receiver();
    const { id } = await target(r);
    await onRequest(`/${LANG}/ResolveLanguages`, [id]);
    for (const protocol of ["grpc", "grpc-web", "connect-h1", "connect-h2"] as const) {
      await call(
        protocol,
        t.url,
        LanguageSettingsService,
        LanguageSettingsService.method.resolveLanguages,
        create(LanguageSettingsService.method.resolveLanguages.input, {}),
        { token: t.adminPat },
      );
    }
    await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat });
    expect((await r.waitFor(5)).length).toBe(5);
  });

  it("let a rest_request_response target rewrite the request", async () => {
    const r = await receiver((got) => ({ body: { ...got.body.request, settings: { defaultLanguage: { key: "fr" } } } }));
    const { id } = await target(r, { type: "rr" });
    await onRequest(`/${LANG}/SetLanguages`, [id]);
    await lang.setLanguages({ settings: { defaultLanguage: { key: "de" } } });
    await api.deleteExecution({ id: `request/${LANG}/SetLanguages` });
    expect((await lang.resolveLanguages({})).settings?.defaultLanguage?.value).toBe("fr");
  });

  it("let a rest_request_response target rewrite the response", async () => {
    const r = await receiver((got) => {
      const response = got.body.response;
      response.settings.defaultLanguage.value = "xx-from-target";
      return { body: response };
    });
    const { id } = await target(r, { type: "rr" });
    const put = await rest(t.url, "POST", "/resources/v3alpha/executions", {
      token: t.adminPat,
      body: { condition: { response: { method: `/${LANG}/ResolveLanguages` } }, targets: [id] },
    });
    expect(put.status).toBe(201);
    const res = await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat });
    expect(res.body.settings.defaultLanguage.value).toBe("xx-from-target");
    // the target saw the request and the response
    expect(r.received[0]!.body.response.settings.supportedLanguages.owner.type).toBe("OWNER_TYPE_SYSTEM");
  });

  it("fail the call when an interrupt_on_error target fails, and not otherwise", async () => {
    const failing = await receiver(() => ({ status: 500 }));
    const interrupting = await target(failing, { mode: "interrupt" });
    const tolerant = await target(failing);
    await onRequest(`/${LANG}/ResolveLanguages`, [tolerant.id]);
    expect((await lang.resolveLanguages({})).settings).toBeDefined();
    await onRequest(`/${LANG}/ResolveLanguages`, [tolerant.id, interrupting.id]);
    const err = await expectCode(lang.resolveLanguages({}), Code.FailedPrecondition);
    expect(err.rawMessage).toContain("HTTP 500");
    const viaRest = await rest(t.url, "GET", "/settings/v3alpha/languages", { token: t.adminPat });
    expect(viaRest.status).toBe(400);
    expect(viaRest.body.code).toBe(Code.FailedPrecondition);
  });

  it("cut a slow target at its timeout", async () => {
    const slow = await receiver(() => ({ delayMs: 3000 }));
    const cut = await target(slow, { timeout: "0.2s", mode: "interrupt" });
    await onRequest(`/${LANG}/ResolveLanguages`, [cut.id]);
    const t0 = Date.now();
    const err = await expectCode(lang.resolveLanguages({}), Code.FailedPrecondition);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(err.rawMessage).toContain("did not answer within 200 ms");
    const tolerant = await target(slow, { timeout: "0.2s" });
    await onRequest(`/${LANG}/ResolveLanguages`, [tolerant.id]);
    const t1 = Date.now();
    await lang.resolveLanguages({});
    expect(Date.now() - t1).toBeLessThan(2000);
  });

  it("do not wait for an async target", async () => {
    const slow = await receiver(() => ({ delayMs: 1500, status: 500 }));
    const fire = await target(slow, { mode: "async" });
    await onRequest(`/${LANG}/ResolveLanguages`, [fire.id]);
    const t0 = Date.now();
    await lang.resolveLanguages({});
    expect(Date.now() - t0).toBeLessThan(1000);
    await slow.waitFor(1);
  });

  it("use only the most specific execution (method, then service, then all), includes expanded in place", async () => {
    const order: string[] = [];
    const mk = async (label: string) => {
      const rr = await receiver(() => void order.push(label));
      return (await target(rr)).id;
    };
    const [a, b, c, d] = [await mk("all"), await mk("service"), await mk("method"), await mk("included")];
    await onRequest("all", [a]);
    await onRequest(LANG, [b]);
    await onRequest(`/${LANG}/SetLanguages`, [d]);
    await onRequest(`/${LANG}/ResolveLanguages`, [c], [`request/${LANG}/SetLanguages`]);
    // (the "all" execution also ran for the PutExecution calls above: they are RPCs too)
    order.length = 0;
    await lang.resolveLanguages({});
    expect(order).toEqual(["method", "included"]);
    await api.deleteExecution({ id: `request/${LANG}/ResolveLanguages` });
    order.length = 0;
    await lang.resolveLanguages({});
    expect(order).toEqual(["service"]);
    order.length = 0;
    await api.searchTargets({});
    expect(order).toEqual(["all"]);
  });

  it("survive targets that answer garbage, huge answers, or hang up", async () => {
    const garbage = await receiver(() => ({ raw: "<html>not json" }));
    const rr = await target(garbage, { type: "rr" });
    await onRequest(`/${LANG}/ResolveLanguages`, [rr.id]);
    // not interrupting: the garbage is ignored
    expect((await lang.resolveLanguages({})).settings?.supportedLanguages).toBeDefined();
    const rrInterrupt = await target(garbage, { type: "rr", mode: "interrupt" });
    await onRequest(`/${LANG}/ResolveLanguages`, [rrInterrupt.id]);
    expect((await expectCode(lang.resolveLanguages({}), Code.FailedPrecondition)).rawMessage).toContain("not JSON");
    const wrongShape = await receiver(() => ({ body: { settings: { nope: 1 } } }));
    const ws = await target(wrongShape, { type: "rr", mode: "interrupt" });
    await onRequest(`/${LANG}/ResolveLanguages`, [ws.id]);
    expect((await expectCode(lang.resolveLanguages({}), Code.FailedPrecondition)).rawMessage).toContain("does not fit");
    const huge = await receiver(() => ({ raw: JSON.stringify({ pad: "x".repeat(3 * 1024 * 1024) }) }));
    const h = await target(huge, { type: "rr", mode: "interrupt" });
    await onRequest(`/${LANG}/ResolveLanguages`, [h.id]);
    expect((await expectCode(lang.resolveLanguages({}), Code.FailedPrecondition)).rawMessage).toContain("more than");
    const gone = await receiver();
    const g = await target(gone, { mode: "interrupt" });
    await gone.stop();
    await onRequest(`/${LANG}/ResolveLanguages`, [g.id]);
    expect((await expectCode(lang.resolveLanguages({}), Code.FailedPrecondition)).rawMessage).toContain("unreachable");
    // and the server is fine
    expect((await rest(t.url, "GET", "/healthz")).status).toBe(200);
  });
});
