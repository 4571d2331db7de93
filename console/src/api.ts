// The API from the browser: the Connect protocol on this origin, with the signed-in user's access token. One
// UNAUTHENTICATED answer (a token revoked or expired early) renews the token and tries once more.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { accessToken, renew } from "./auth";

const bearer: Interceptor = (next) => async (req) => {
  req.header.set("authorization", `Bearer ${await accessToken()}`);
  try {
    return await next(req);
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.Unauthenticated) throw err;
    await renew();
    req.header.set("authorization", `Bearer ${await accessToken()}`);
    return next(req);
  }
};

export const transport = createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true, interceptors: [bearer] });

/** The field a server error names ("invalid user.profile.given_name: ..."), and the message itself. */
export function errorOf(err: unknown): { field?: string; message: string; code?: Code } {
  if (err instanceof ConnectError) {
    const field = /^invalid ([\w.[\]"]+):/.exec(err.rawMessage)?.[1];
    return { message: err.rawMessage, code: err.code, ...(field ? { field } : {}) };
  }
  return { message: err instanceof Error ? err.message : String(err) };
}
