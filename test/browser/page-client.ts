// Bundled by esbuild into the test page: a browser app that calls the server with gRPC-web from its own origin.
import { createClient, ConnectError } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";

async function resolveAndSet(baseUrl: string, token: string, key: string) {
  const transport = createGrpcWebTransport({
    baseUrl,
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      },
    ],
  });
  const client = createClient(LanguageSettingsService, transport);
  try {
    await client.setLanguages({ settings: { defaultLanguage: { key } } });
    const r = await client.resolveLanguages({});
    return { ok: true, defaultLanguage: r.settings?.defaultLanguage?.value };
  } catch (e) {
    const err = ConnectError.from(e);
    return { ok: false, code: err.code, message: err.rawMessage };
  }
}

(globalThis as Record<string, unknown>).resolveAndSet = resolveAndSet;
