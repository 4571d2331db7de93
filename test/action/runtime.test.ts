import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, expectCode, rest } from "../support/clients.js";
import type { TestServer } from "../support/server.js";
import { verifySignature } from "../support/targets.js";
import { create } from "@bufbuild/protobuf";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { executionsFixture, LANG } from "./executions-fixture.js";

let f: Awaited<ReturnType<typeof executionsFixture>>;
let t: TestServer;
let api: typeof f.api;
let lang: typeof f.lang;
beforeAll(async () => {
  f = await executionsFixture();
  ({ t, api, lang } = f);
});
afterAll(() => t?.close());
// each test leaves no execution behind
afterEach(() => f.reset());

const receiver: typeof f.receiver = (...a) => f.receiver(...a);
const target: typeof f.target = (...a) => f.target(...a);
const onRequest: typeof f.onRequest = (...a) => f.onRequest(...a);

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
