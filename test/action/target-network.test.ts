import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { loadConfig } from "../../src/config/config.js";
import { TargetAddressPolicy } from "../../src/domain/target-addresses.js";
import { connectClient, expectCode, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer } from "../support/targets.js";

const LANG = "svc.settings.language.v3alpha.LanguageSettingsService";
let n = 0;

async function createTarget(t: TestServer, url: string, kind: "restWebhook" | "restRequestResponse" = "restWebhook") {
  return rest(t.url, "POST", "/resources/v3alpha/targets", {
    token: t.adminPat,
    body: { name: `net-${n++}`, [kind]: { url }, timeout: "3s", interruptOnError: true },
  });
}

describe("target address policy (SVC_TARGET_DENY)", () => {
  it("denies link-local (the metadata address) and unspecified addresses in every spelling, loopback and private by default", () => {
    const narrow = new TargetAddressPolicy("link-local,unspecified");
    for (const a of ["169.254.169.254", "169.254.0.1", "fe80::1", "FE80::abcd", "0.0.0.0", "::", "::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "[fe80::1]"]) {
      expect(narrow.denies(a), a).toBe(true);
    }
    for (const a of ["127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "93.184.216.34", "2001:db8::1"]) expect(narrow.denies(a), a).toBe(false);
    const byDefault = new TargetAddressPolicy();
    for (const a of ["169.254.169.254", "0.0.0.0", "127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "::ffff:7f00:1"]) expect(byDefault.denies(a), a).toBe(true);
    for (const a of ["93.184.216.34", "2001:db8::1"]) expect(byDefault.denies(a), a).toBe(false);
    expect(byDefault.deniedBy("127.0.0.1")).toBe("loopback");
    expect(byDefault.deniedBy("10.0.0.1")).toBe("private");
  });

  it("denies loopback and private ranges when asked, and ranges and addresses of the operator's", () => {
    const p = new TargetAddressPolicy("loopback, private, 203.0.113.0/24, 2001:db8::5");
    for (const a of ["127.0.0.1", "127.9.9.9", "::1", "10.1.2.3", "172.16.0.1", "192.168.0.1", "fd00::1", "203.0.113.9", "2001:db8::5", "::ffff:7f00:1"]) {
      expect(p.denies(a), a).toBe(true);
    }
    for (const a of ["169.254.169.254", "203.0.114.1", "2001:db8::6"]) expect(p.denies(a), a).toBe(false);
    expect(new TargetAddressPolicy("none").denies("169.254.169.254")).toBe(false);
  });

  it("is checked when the configuration loads, naming the variable and the item", () => {
    expect(() => loadConfig({ SVC_TARGET_DENY: "link-local,lan" }, [])).toThrow(/SVC_TARGET_DENY: "lan" is neither/);
    expect(() => loadConfig({ SVC_TARGET_DENY: "10.0.0.0/33" }, [])).toThrow(/SVC_TARGET_DENY/);
    expect(loadConfig({}, []).targetDeny).toBe("loopback,private,link-local,unspecified");
  });
});

describe("targets cannot point at denied addresses", () => {
  let t: TestServer;
  let strict: TestServer;
  /** Names only the tests' resolver knows; the system's resolver would not find them. */
  const names = new Map<string, { address: string; family: number }[]>();
  const resolveHost = async (hostname: string) => {
    const found = names.get(hostname);
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return found;
  };
  const v4 = (address: string) => [{ address, family: 4 }];
  const receivers: TargetServer[] = [];

  beforeAll(async () => {
    [t, strict] = await Promise.all([
      // the narrower list of development beside local services: loopback and private addresses reachable
      startTestServer({ SVC_TARGET_DENY: "link-local,unspecified" }, { resolveHost }),
      startTestServer({ SVC_TARGET_DENY: "link-local,unspecified,loopback,private" }, { resolveHost }),
    ]);
  });
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await Promise.all([t?.close(), strict?.close()]);
  });

  it("refuses other schemes and denied addresses at creation, naming the url field (REST and Connect)", async () => {
    for (const url of [
      "file:///etc/passwd",
      "gopher://example.com:70/_x",
      "ftp://example.com/x",
      "http://169.254.169.254/latest/meta-data/",
      "http://2852039166/latest/meta-data/", // 169.254.169.254 as one number
      "http://0xa9.0xfe.0xa9.0xfe/",
      "http://[::ffff:169.254.169.254]/",
      "http://[fe80::1]:8080/",
      "http://0.0.0.0:8080/",
      "http://[::]:8080/",
    ]) {
      for (const kind of ["restWebhook", "restRequestResponse"] as const) {
        const r = await createTarget(t, url, kind);
        expect(r.status, url).toBe(400);
        expect(r.body.message, url).toMatch(kind === "restWebhook" ? /^invalid target\.rest_webhook\.url: / : /^invalid target\.rest_request_response\.url: /);
      }
    }
    const api = connectClient(ActionService, t.url, t.adminPat);
    const err = await expectCode(
      api.createTarget({
        target: { name: "grpc-meta", targetType: { case: "restWebhook", value: { url: "http://169.254.169.254/" } }, timeout: { seconds: 1n } },
      }),
      Code.InvalidArgument,
    );
    expect(err.rawMessage).toMatch(/target\.rest_webhook\.url: must not point at 169\.254\.169\.254/);
    // loopback and private addresses are allowed by the narrower list
    expect((await createTarget(t, "http://127.0.0.1:9/hook")).status).toBe(201);
    expect((await createTarget(t, "http://10.0.0.1/hook")).status).toBe(201);
    expect((await createTarget(t, "https://[::1]/hook")).status).toBe(201);
  });

  it("refuses a denied address in a change of the URL", async () => {
    const created = await createTarget(t, "https://example.com/hook");
    expect(created.status).toBe(201);
    const r = await rest(t.url, "PATCH", `/resources/v3alpha/targets/${created.body.details.id}`, {
      token: t.adminPat,
      body: { restWebhook: { url: "http://[fe80::1]/" } },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^invalid target\.rest_webhook\.url: must not point at fe80::1/);
  });

  it("denies loopback and private ranges when configured", async () => {
    for (const url of ["http://127.0.0.1:9/hook", "http://[::1]/", "http://10.0.0.1/", "http://192.168.1.1/", "http://172.16.0.1/"]) {
      const r = await createTarget(strict, url);
      expect(r.status, url).toBe(400);
      expect(r.body.message, url).toMatch(/target\.rest_webhook\.url: must not point at/);
    }
    expect((await createTarget(strict, "https://example.com/hook")).status).toBe(201);
  });

  /** A target on ResolveLanguages that must interrupt it when it fails; the call's error, or undefined when it went through. */
  async function callThrough(s: TestServer, url: string): Promise<string | undefined> {
    const created = await createTarget(s, url);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // setting the execution of a condition replaces its targets
    const x = await rest(s.url, "POST", "/resources/v3alpha/executions", {
      token: s.adminPat,
      body: { condition: { request: { method: `/${LANG}/ResolveLanguages` } }, targets: [created.body.details.id] },
    });
    expect(x.status, JSON.stringify(x.body)).toBeLessThan(300);
    const lang = connectClient(LanguageSettingsService, s.url, s.adminPat);
    try {
      await lang.resolveLanguages({});
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }

  it("checks the resolved address at each call and connects to the address it checked", async () => {
    const r = await new TargetServer().start();
    receivers.push(r);
    // a name only our resolver knows: reaching the receiver proves the connection used the checked address
    names.set("beside.test", v4("127.0.0.1"));
    expect(await callThrough(t, `http://beside.test:${r.port}/hook`)).toBeUndefined();
    expect(r.received.length).toBe(1);

    for (const [name, found] of [
      ["metadata.test", v4("169.254.169.254")],
      ["linklocal6.test", [{ address: "fe80::1", family: 6 }]],
      ["mapped.test", [{ address: "::ffff:169.254.169.254", family: 6 }]],
      ["zero.test", v4("0.0.0.0")],
      // one denied address among allowed ones refuses the name
      ["mixed.test", [...v4("127.0.0.1"), ...v4("169.254.169.254")]],
    ] as const) {
      names.set(name, [...found]);
      const err = await callThrough(t, `http://${name}:${r.port}/hook`);
      expect(err, name).toMatch(/resolves to [0-9a-f:.]+, which is denied by SVC_TARGET_DENY \((link-local|unspecified)\)/);
    }
    expect(r.received.length).toBe(1);
    // loopback denied on the strict server: the name resolving to it is refused at the call
    expect(await callThrough(strict, `http://beside.test:${r.port}/hook`)).toMatch(/resolves to 127\.0\.0\.1, which is denied by SVC_TARGET_DENY \(loopback\)/);
    expect(r.received.length).toBe(1);
  });

  it("is not fooled by DNS rebinding: allowed when created, denied when called", async () => {
    const r = await new TargetServer().start();
    receivers.push(r);
    names.set("rebind.test", v4("127.0.0.1"));
    expect(await callThrough(t, `http://rebind.test:${r.port}/hook`)).toBeUndefined();
    expect(r.received.length).toBe(1);
    // the name now answers with the metadata address; kept-alive connections to the checked address end first
    names.set("rebind.test", v4("169.254.169.254"));
    r.down();
    await new Promise((ok) => setTimeout(ok, 100));
    r.up();
    const lang = connectClient(LanguageSettingsService, t.url, t.adminPat);
    const err = await expectCode(lang.resolveLanguages({}), Code.FailedPrecondition);
    expect(err.rawMessage).toMatch(/resolves to 169\.254\.169\.254, which is denied by SVC_TARGET_DENY \(link-local\)/);
    expect(r.received.length).toBe(1);
  });

  it("refuses at call time a stored URL the policy denies now (a target created before the policy)", async () => {
    // created on the permissive server, then the same database served with loopback denied
    const created = await createTarget(t, "http://127.0.0.1:9/old");
    expect(created.status).toBe(201);
    const { TargetCaller } = await import("../../src/actions/caller.js");
    const caller = new TargetCaller({ warn: () => {} }, new TargetAddressPolicy("loopback"));
    await expect(
      caller.runChain(
        [
          {
            id: "x",
            name: "old",
            url: "http://127.0.0.1:9/old",
            signingKey: "k",
            timeoutMs: 1000,
            isAsync: false,
            interruptOnError: true,
            targetType: "rest_webhook",
          } as never,
        ],
        {},
      ),
    ).rejects.toThrow(/is refused: its URL must not point at 127\.0\.0\.1/);
    await expect(
      caller.runChain(
        [
          {
            id: "y",
            name: "file",
            url: "file:///etc/passwd",
            signingKey: "k",
            timeoutMs: 1000,
            isAsync: false,
            interruptOnError: true,
            targetType: "rest_webhook",
          } as never,
        ],
        {},
      ),
    ).rejects.toThrow(/must be an http or https URL, not file/);
    caller.close();
  });
});
