import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnerType } from "../../gen/svc/object/v3alpha/object_pb.js";
import { ResolveTextsRequestSchema, SetTextsRequestSchema, TextSettingsService } from "../../gen/svc/settings/text/v3alpha/text_service_pb.js";
import { inheritanceChain } from "../../src/domain/contexts.js";
import { translations } from "../../src/domain/texts/translations.js";
import { ProjectionCache } from "../../src/query/cache.js";
import { SettingsQueries } from "../../src/query/settings.js";
import { FormClient } from "../security/browser-form.js";
import { call, expectCode, rest } from "../support/clients.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import type { TestServer } from "../support/server.js";
import type { MailServer } from "../support/smtp.js";

// Text settings: labels of the login UI and texts of the messages, per language, inherited system > instance > org.
let t: TestServer;
let mail: MailServer;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ t, mail, close } = await startMessagingServer());
});
afterAll(async () => {
  await close?.();
});

const texts = (method: string, language: string, query = "", body?: unknown) =>
  rest(t.url, method, `/settings/v3alpha/texts/${language}${query}`, { token: t.adminPat, ...(body ? { body } : {}) });
const inOrg = () => `?ctx.org_id=${t.defaultOrgId}`;
const grpc = () => ({ token: t.adminPat });
const org = () => ({ owner: { case: "orgId" as const, value: t.defaultOrgId } });

describe("text settings", () => {
  it("resolve every key of a language with the built-in texts, owned by the system", async () => {
    const r = await texts("GET", "de");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.texts["login.title"]).toMatchObject({ value: translations.de!.login.title, owner: { type: "OWNER_TYPE_SYSTEM" } });
    expect(r.body.texts["message.verifyEmail.text"].value).toContain("{code}");
    // Every label and every message's subject and text.
    expect(Object.keys(r.body.texts).length).toBeGreaterThan(80);
  });

  it("set on the instance is inherited by the organisation; the organisation overrides and resets single texts (REST and gRPC)", async () => {
    expect((await texts("PATCH", "de", "", { "login.title": { set: "Willkommen bei Acme" } })).status).toBe(200);
    let r = await texts("GET", "de", inOrg());
    expect(r.body.texts["login.title"].value).toBe("Willkommen bei Acme");
    expect(r.body.texts["login.title"].owner.type).toBe("OWNER_TYPE_INSTANCE");

    const set = create(SetTextsRequestSchema, { ctx: org(), language: "de", texts: { "login.title": { value: { case: "set", value: "Acme Org" } } } });
    const details = await call("grpc", t.url, TextSettingsService, TextSettingsService.method.setTexts, set, grpc());
    expect(details.details?.owner?.type).toBe(OwnerType.ORG);
    const resolved = await call(
      "grpc",
      t.url,
      TextSettingsService,
      TextSettingsService.method.resolveTexts,
      create(ResolveTextsRequestSchema, { ctx: org(), language: "de" }),
      grpc(),
    );
    expect(resolved.texts["login.title"]?.value).toBe("Acme Org");
    // Set in the context itself: no owner reported.
    expect(resolved.texts["login.title"]?.owner).toBeUndefined();
    // Other languages and the instance are untouched.
    expect((await texts("GET", "de")).body.texts["login.title"].value).toBe("Willkommen bei Acme");
    expect((await texts("GET", "en", inOrg())).body.texts["login.title"].value).toBe("Sign in");

    expect((await texts("PATCH", "de", inOrg(), { "login.title": { reset: true } })).status).toBe(200);
    r = await texts("GET", "de", inOrg());
    expect(r.body.texts["login.title"]).toEqual({ value: "Willkommen bei Acme", owner: { type: "OWNER_TYPE_INSTANCE", id: t.instanceId } });
    expect((await texts("PATCH", "de", "", { "login.title": { reset: true } })).status).toBe(200);
  });

  it("refuse unknown keys and languages, empty texts, and message texts that lose or add placeholders, naming the field", async () => {
    const refused = async (language: string, body: unknown, field: string) => {
      const r = await texts("PATCH", language, "", body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.message).toContain(field);
      return r.body.message as string;
    };
    await refused("de", { "login.nope": { set: "x" } }, 'texts["login.nope"]');
    await refused("xx", { "login.title": { set: "x" } }, "language");
    await refused("d3", { "login.title": { set: "x" } }, "language");
    await refused("de", { "login.title": { set: "  " } }, 'texts["login.title"].set');
    expect(await refused("en", { "message.verifyEmail.text": { set: "Hello {name}, click {link}" } }, 'texts["message.verifyEmail.text"].set')).toContain(
      "{code}",
    );
    expect(await refused("en", { "message.verifyEmail.subject": { set: "Hello {name}" } }, 'texts["message.verifyEmail.subject"].set')).toContain("{name}");
    await refused("de", {}, "texts");
    // A line break in a subject would end the mail's header.
    expect(await refused("en", { "message.verifyEmail.subject": { set: "Hi\r\nBcc: x@example.com" } }, 'texts["message.verifyEmail.subject"].set')).toContain(
      "one line",
    );
    // Nothing was stored by the refused requests.
    expect((await texts("GET", "de")).body.texts["login.title"].owner.type).toBe("OWNER_TYPE_SYSTEM");
    await expectCode(
      call(
        "grpc",
        t.url,
        TextSettingsService,
        TextSettingsService.method.setTexts,
        create(SetTextsRequestSchema, { language: "de", texts: { nope: { value: { case: "set", value: "x" } } } }),
        grpc(),
      ),
      Code.InvalidArgument,
    );
  });

  it("need policy.write to set and a credential to read", async () => {
    expect((await rest(t.url, "GET", "/settings/v3alpha/texts/de", {})).status).toBe(401);
    const user = await rest(t.url, "POST", "/resources/v3alpha/users", {
      token: t.adminPat,
      body: { username: "texts-reader", machine: { name: "reader" } },
    });
    const pat = await rest(t.url, "POST", `/resources/v3alpha/users/${user.body.details.id}/pats`, { token: t.adminPat, body: {} });
    const token = pat.body.token as string;
    expect((await rest(t.url, "GET", "/settings/v3alpha/texts/de", { token })).status).toBe(200);
    expect((await rest(t.url, "PATCH", "/settings/v3alpha/texts/de", { token, body: { "login.title": { set: "x" } } })).status).toBe(403);
  });

  it("show in the login UI in their language, escaped", async () => {
    expect((await texts("PATCH", "de", "", { "login.resetTitle": { set: "<b>Neues Passwort</b> für Acme" } })).status).toBe(200);
    const de = await (await fetch(`${t.url}/ui/login/password/reset`, { headers: { "accept-language": "de" } })).text();
    expect(de).toContain("Neues Passwort");
    expect(de).not.toContain("<b>Neues Passwort</b>");
    const en = await (await fetch(`${t.url}/ui/login/password/reset`, { headers: { "accept-language": "en" } })).text();
    expect(en).toContain("Reset your password");
    expect(en).not.toContain("Neues Passwort");
  });

  it("read one language's labels as the login UI does: the organisation's over the instance's, other languages and messages left out", async () => {
    expect((await texts("PATCH", "fr", "", { "login.title": { set: "Connexion (instance)" }, "login.next": { set: "Suivant (instance)" } })).status).toBe(200);
    expect((await texts("PATCH", "fr", inOrg(), { "login.title": { set: "Connexion (org)" }, "message.verifyEmail.subject": { set: "Objet" } })).status).toBe(
      200,
    );
    const settings = new SettingsQueries(t.server.db, new ProjectionCache());
    const chain = inheritanceChain({ type: "org", instanceId: t.instanceId, orgId: t.defaultOrgId });
    expect(await settings.setWithPrefix("text", chain, "fr.login.")).toEqual({ "fr.login.title": "Connexion (org)", "fr.login.next": "Suivant (instance)" });
    // the same as resolving every text, for the keys set
    const all = await settings.values("text", chain);
    expect([all["fr.login.title"], all["fr.login.next"]]).toEqual(["Connexion (org)", "Suivant (instance)"]);
    for (const [query, reset] of [
      ["", ["login.title", "login.next"]],
      [inOrg(), ["login.title", "message.verifyEmail.subject"]],
    ] as const) {
      await texts("PATCH", "fr", query, Object.fromEntries(reset.map((k) => [k, { reset: true }])));
    }
  });

  it("say what a new password lacks in the page's language, worded as the text settings say", async () => {
    const password = { password: "Initial!pass1", changeRequired: true };
    const human = { profile: { givenName: "Greta", familyName: "Garbo" }, email: { address: "greta@example.com", isVerified: true }, password };
    expect((await rest(t.url, "POST", "/resources/v3alpha/users", { token: t.adminPat, body: { username: "greta", human } })).status).toBe(201);
    expect((await texts("PATCH", "de", "", { "login.passwordNeedsSymbol": { set: "ein Zeichen wie $& oder #" } })).status).toBe(200);
    const browser = new FormClient(t.url, undefined, { "accept-language": "de-CH,de;q=0.9" });
    const change = await browser.post("/ui/login/password", { loginName: "greta", password: password.password });
    const pending = /name="pending" value="([^"]+)"/.exec(change.body)?.[1];
    expect(pending, change.body.slice(0, 300)).toBeTruthy();
    const weak = await browser.post("/ui/login/password/change", { pending: pending!, newPassword: "kurz", confirmPassword: "kurz" });
    expect(weak.status).toBe(400);
    expect(weak.body).toContain("Das Passwort muss mindestens 8 Zeichen, einen Großbuchstaben, eine Ziffer, ein Zeichen wie $&amp; oder # enthalten.");
  });

  it("give the messages of an organisation's users their subject and text", async () => {
    const subject = "Acme: confirm your address";
    const body = "Hi {name}, the Acme code is {code}, or open {link} ({minutes} minutes).";
    const set = await texts("PATCH", "en", inOrg(), { "message.verifyEmail.subject": { set: subject }, "message.verifyEmail.text": { set: body } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const created = await rest(t.url, "POST", "/resources/v3alpha/users", {
      token: t.adminPat,
      body: {
        username: "texta",
        human: { profile: { givenName: "Texta", familyName: "T" }, email: { address: "texta@example.com" }, password: { password: "Secr3t!pass" } },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [m] = await mailsTo(mail, "texta@example.com");
    expect(m!.raw).toContain(`Subject: ${subject}`);
    expect(m!.raw).toMatch(/Hi Texta, the Acme code is [A-Z2-9]{8}, or open http/);
  });
});
