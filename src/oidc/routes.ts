import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { authorize, callback, CALLBACK } from "./authorize.js";
import { paths, scopeOf, type OidcDeps, type RequestScope } from "./context.js";
import { END_SESSION_DONE, endSession, endSessionDone } from "./end-session.js";
import { discovery, jwks } from "./discovery.js";
import { OAuthError, oauth } from "./errors.js";
import { token } from "./grants/index.js";
import { introspect } from "./introspection.js";
import { addStrictTransport, nulParameter } from "../web/browser.js";
import { paramsOf, parseForm } from "./params.js";
import { errorPage } from "./responses.js";
import { revoke } from "./revocation.js";
import { userinfo } from "./userinfo.js";
import type { FailureLimiter } from "../command/failure-limits.js";
import type { RateLimiter, RateVerdict } from "../command/rate-limits.js";
import { addressKey } from "../domain/client-address.js";
import type { RateRule } from "../domain/rate-rules.js";
import { failedAtGuessable } from "./failures.js";

/**
 * SVC_RATE_LIMIT_OAUTH_* (off by default): all requests at the token, introspection and revocation endpoints, per
 * client and address, and per address; SVC_RATE_LIMIT_TOKEN_FAILURES_ADDRESS: their failed client
 * authentications and unknown tokens (and userinfo's), per address.
 */
export interface OAuthRateLimits {
  limiter: RateLimiter;
  client?: RateRule | undefined;
  address?: RateRule | undefined;
  failures?: { limiter: FailureLimiter; address: RateRule } | undefined;
}

/**
 * The client a request names, before it is authenticated: the Basic user (RFC 6749 §2.3.1, form-encoded),
 * else `client_id`, else the subject of a client assertion (read, not verified: it only picks the counter).
 */
function claimedClient(req: FastifyRequest, params: Record<string, string>): string | undefined {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? "");
  if (basic) {
    const user = Buffer.from(basic[1]!, "base64").toString("utf8").split(":")[0] ?? "";
    try {
      return decodeURIComponent(user.replace(/\+/g, " "));
    } catch {
      return user;
    }
  }
  if (params.client_id) return params.client_id;
  const payload = params.client_assertion?.split(".")[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown };
    return typeof claims.sub === "string" ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

type Handler = (s: RequestScope, req: FastifyRequest, reply: FastifyReply, params: Record<string, string>) => Promise<unknown>;

const FORM = "application/x-www-form-urlencoded";

/**
 * The token, introspection and revocation endpoints take their parameters as a form body only (RFC 6749 §3.2,
 * RFC 7662 §2.1, RFC 7009 §2.1): any other body, JSON included, is invalid_request naming its content type.
 */
function requireForm(req: FastifyRequest, rfc: string): void {
  const raw = req.headers["content-type"];
  const type = (raw ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === FORM) return;
  const shown = type ? type.replace(/[^\w.+/-]/g, "").slice(0, 100) : "none";
  throw oauth.invalidRequest(`the content type ${shown} is not accepted: the parameters must be sent as ${FORM} (${rfc})`);
}

/** The OAuth 2.0 / OpenID Connect endpoints, on the one port, for the instance of the Host. */
export function registerOidc(app: FastifyInstance, deps: OidcDeps, limits?: OAuthRateLimits): void {
  app.register(async (scope) => {
    // Only forms are parsed here (not JSON: RFC 6749 §3.2, RFC 6750 §2.2, OIDC Core §5.3.1 all send forms).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(FORM, { parseAs: "string", bodyLimit: 64 * 1024 }, (_req, body, done) => done(null, parseForm(body as string)));
    // Any other content type reaches the endpoint without parameters, so that the form-only endpoints answer
    // invalid_request naming it (rather than Fastify's 415) and userinfo still reads its bearer header.
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: 64 * 1024 }, (_req, _body, done) => done(null, undefined));

    /** What every endpoint of a blocked instance answers (the system API's Limit blocks and unblocks). */
    const BLOCKED = { error: "temporarily_unavailable", error_description: "the instance is blocked" };

    /** Runs an endpoint: unknown host 404, OAuth errors as JSON with their status, nothing cached. */
    const tooMany = (reply: FastifyReply, verdict: RateVerdict) =>
      reply
        .status(429)
        .header("retry-after", String(verdict.retryAfterS))
        .send({ error: "temporarily_unavailable", error_description: `too many requests: retry after ${verdict.retryAfterS} s` });

    const endpoint =
      (handler: Handler, opts: { noStore?: boolean; formOnly?: string; limited?: boolean; bearer?: boolean } = { noStore: true }) =>
      async (req: FastifyRequest, reply: FastifyReply) => {
        if (opts.noStore) reply.header("cache-control", "no-store").header("pragma", "no-cache");
        const s = await scopeOf(deps, req);
        if (!s) return reply.status(404).send({ error: "not_found", error_description: "no instance is served at this host" });
        if (s.instance.blocked) return reply.status(429).send(BLOCKED);
        const address = addressKey(req.client.address);
        // Failures of this address's guessable credentials: refused before anything is checked while over.
        const failureKeys = limits?.failures && (opts.limited || opts.bearer) ? [{ key: `token:addr:${address}`, rule: limits.failures.address }] : [];
        try {
          if (opts.formOnly) requireForm(req, opts.formOnly);
          const params = paramsOf(req);
          const failures = await limits?.failures?.limiter.check(failureKeys);
          if (failures && !failures.allowed) return tooMany(reply, failures);
          if (opts.limited && limits && (limits.address || limits.client)) {
            // All requests, counted before anything is checked; a client's count is per address too, so that
            // requests that merely name a client cannot use up its allowance elsewhere (security review, finding 9).
            const client = claimedClient(req, params);
            const verdict = await limits.limiter.check([
              { key: `oauth:addr:${address}`, rule: limits.address },
              ...(client ? [{ key: `oauth:client:${s.instance.id}:${client}:${address}`, rule: limits.client }] : []),
            ]);
            if (!verdict.allowed) return tooMany(reply, verdict);
          }
          const result = await handler(s, req, reply, params);
          if (failedAtGuessable(req, undefined)) await limits?.failures?.limiter.fail(failureKeys);
          return reply.send(result ?? "");
        } catch (e) {
          const err = e instanceof OAuthError ? e : undefined;
          if (!err) {
            req.log.error({ err: e }, "OAuth endpoint failure");
            return reply.status(500).send(oauth.serverError("unexpected condition").body());
          }
          if (failedAtGuessable(req, err)) await limits?.failures?.limiter.fail(failureKeys);
          // RFC 6749 §5.2 and RFC 6750 §3: a 401 challenges with the scheme the client used.
          const usedBasic = /^Basic /i.test(req.headers.authorization ?? "");
          if (err.status === 401 && (err.error === "invalid_token" || usedBasic)) {
            const scheme = err.error === "invalid_token" ? "Bearer" : "Basic";
            reply.header("www-authenticate", `${scheme} error="${err.error}", error_description="${err.message.replace(/"/g, "'")}"`);
          }
          return reply.status(err.status).send(err.body());
        }
      };

    scope.get(
      paths.discovery,
      endpoint((s) => discovery(deps, s), { noStore: false }),
    );
    scope.get(
      paths.keys,
      endpoint((s, _req, reply) => jwks(deps, s, reply), { noStore: false }),
    );
    scope.post(
      paths.token,
      endpoint((s, req, _reply, params) => token(deps, s, req, params), { noStore: true, formOnly: "RFC 6749 §3.2", limited: true }),
    );
    scope.post(
      paths.introspect,
      endpoint((s, req, _reply, params) => introspect(deps, s, req, params), { noStore: true, formOnly: "RFC 7662 §2.1", limited: true }),
    );
    // OIDC Core §5.3.1: userinfo accepts GET and POST.
    scope.route({
      method: ["GET", "POST"],
      url: paths.userinfo,
      handler: endpoint((s, req, _reply, params) => userinfo(deps, s, req, params), { noStore: true, bearer: true }),
    });
    scope.post(
      paths.revoke,
      endpoint((s, req, _reply, params) => revoke(deps, s, req, params), { noStore: true, formOnly: "RFC 7009 §2.1", limited: true }),
    );

    /** Browser endpoints: an unknown host is a page, not JSON; each handler answers itself. */
    const page =
      (handler: (s: RequestScope, req: FastifyRequest, reply: FastifyReply) => Promise<unknown>) => async (req: FastifyRequest, reply: FastifyReply) => {
        addStrictTransport(req, reply, deps.secure);
        const s = await scopeOf(deps, req);
        if (!s) return reply.status(404).type("text/plain").send("no instance is served at this host");
        if (s.instance.blocked) return reply.status(429).header("cache-control", "no-store").send(BLOCKED);
        // Also for the pages that read the query themselves rather than through paramsOf (callback, done).
        const withNul = nulParameter(req.query) ?? nulParameter(req.body);
        if (withNul) return errorPage(reply, 400, "invalid_request", `the parameter ${withNul} must not contain NUL characters`);
        return handler(s, req, reply);
      };
    // The authorization and end-session endpoints take GET and POST (OIDC Core §3.1.2.1, RP-Initiated Logout §2).
    scope.route({ method: ["GET", "POST"], url: paths.authorize, handler: page((s, req, reply) => authorize(deps, s, req, reply)) });
    scope.get(
      CALLBACK,
      page((s, req, reply) => callback(deps, s, req, reply)),
    );
    scope.route({ method: ["GET", "POST"], url: paths.endSession, handler: page((s, req, reply) => endSession(deps, s, req, reply)) });
    scope.get(
      END_SESSION_DONE,
      page((s, req, reply) => endSessionDone(deps, s, req, reply)),
    );
  });
}
