import { expect } from "vitest";
import { ActionService } from "../../gen/svc/resources/action/v3alpha/action_service_pb.js";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { connectClient, rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { TargetServer, type Behaviour } from "../support/targets.js";

export const LANG = "svc.settings.language.v3alpha.LanguageSettingsService";

type Kind = { type?: "webhook" | "rr"; timeout?: string; mode?: "async" | "interrupt" };

/**
 * A server with clients of the action and language APIs, receivers (target servers) and the calls that make
 * targets and executions: what the execution tests share. `reset` leaves no execution or receiver behind.
 */
export async function executionsFixture() {
  const t: TestServer = await startTestServer();
  const api = connectClient(ActionService, t.url, t.adminPat);
  const lang = connectClient(LanguageSettingsService, t.url, t.adminPat);
  const receivers: TargetServer[] = [];
  let n = 0;
  return {
    t,
    api,
    lang,
    async reset() {
      const all = await api.searchExecutions({ query: { limit: 1000 } });
      for (const x of all.result) await api.deleteExecution({ id: x.details!.id }).catch(() => {});
      for (const r of receivers.splice(0)) await r.stop();
    },
    async receiver(behaviour?: Behaviour) {
      const r = await new TargetServer(behaviour).start();
      receivers.push(r);
      return r;
    },
    async target(r: TargetServer, kind: Kind = {}) {
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
    },
    async onRequest(method: string, targets: string[], includes: string[] = []) {
      const condition = method === "all" ? { request: { all: true } } : method.includes("/") ? { request: { method } } : { request: { service: method } };
      const res = await rest(t.url, "POST", "/resources/v3alpha/executions", { token: t.adminPat, body: { condition, targets, includes } });
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    },
  };
}
