import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import {
  FinishWebauthnRegistrationResponseSchema,
  ListWebauthnKeysResponseSchema,
  RemoveWebauthnKeyResponseSchema,
  StartWebauthnRegistrationResponseSchema,
  WebauthnKeySchema,
  type FinishWebauthnRegistrationRequest,
  type ListWebauthnKeysRequest,
  type RemoveWebauthnKeyRequest,
  type StartWebauthnRegistrationRequest,
} from "../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { clientOf } from "../../authz/context.js";
import { hostnameOf } from "../../authz/interceptor.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import * as webauthn from "../../command/webauthn.js";
import { inheritanceChain } from "../../domain/contexts.js";
import { errors } from "../../errors/errors.js";
import type { toResourceDetails } from "../convert.js";
import type { UserDeps } from "./service.js";

/** A registration waits this long for its response (the browser's own prompt times out after 5 minutes). */
const REGISTRATION_TTL_MS = 10 * 60_000;

type Resolved = {
  user: { id: string; orgId: string; username: string; displayName: string };
  args: { instanceId: string; id: string; creator: string };
};

/**
 * The user API's WebAuthn registration (issue 14): start returns the creation options and the challenge sealed
 * with the master key (with user, instance, purpose and expiry), so that nothing is stored between the calls;
 * finish verifies the attestation for the RP ID the request reached and the origin the caller names.
 */
export function webauthnHandlers(
  deps: UserDeps,
  resolve: (ctx: HandlerContext, id: string) => Promise<Resolved>,
  details: (d: ChangeDetails) => ReturnType<typeof toResourceDetails>,
) {
  const rpIdOf = (ctx: HandlerContext) => hostnameOf(clientOf(ctx).host);

  async function requireAllowed(instanceId: string, orgId: string, passwordless: boolean) {
    const login = await deps.settings.values("login", inheritanceChain({ type: "org", instanceId, orgId }));
    if (passwordless ? !login.passwordless_allowed : !login.second_factors.includes("u2f")) {
      const what = passwordless ? "passkeys (login settings passwordless_allowed)" : 'security keys (login settings second_factors "u2f")';
      throw errors.failedPrecondition("WEBAUTHN-s3t1", `passwordless: ${what} are not allowed for this user`);
    }
  }

  /** The sealed registration, checked against the request's user; INVALID_ARGUMENT naming registration_token. */
  function openToken(token: string, instanceId: string, userId: string): { ch: string; p: boolean; rp: string } {
    const wrong = () => errors.invalidArgument("WEBAUTHN-t0k1", "registration_token: not a registration of this user, or expired");
    let v: { ch?: unknown; p?: unknown; u?: unknown; i?: unknown; rp?: unknown; exp?: unknown };
    try {
      v = JSON.parse(deps.box.open(token));
    } catch {
      throw wrong();
    }
    if (v.u !== userId || v.i !== instanceId || typeof v.exp !== "number" || v.exp < deps.clock.now() || typeof v.ch !== "string" || typeof v.rp !== "string") {
      throw wrong();
    }
    return { ch: v.ch, p: v.p === true, rp: v.rp };
  }

  /** The page's origin must be on the RP ID's domain (WebAuthn's rule for an RP ID and an origin). */
  function checkedOrigin(origin: string, rpId: string): string {
    const problem = webauthn.originProblem(origin, rpId);
    if (problem) throw errors.invalidArgument("WEBAUTHN-o1g2", `origin: ${problem}`);
    return origin;
  }

  return {
    async startWebauthnRegistration(req: StartWebauthnRegistrationRequest, ctx: HandlerContext) {
      const { user, args } = await resolve(ctx, req.id);
      await requireAllowed(args.instanceId, user.orgId, req.passwordless);
      const rp = { id: rpIdOf(ctx), origin: "", name: "" };
      const purpose = req.passwordless ? "passwordless" : "u2f";
      const options = await webauthn.startWebauthnRegistration(deps.db, { instanceId: args.instanceId, user, rp: { ...rp, name: rp.id }, purpose });
      const token = deps.box.seal(
        JSON.stringify({ ch: options.challenge, p: req.passwordless, u: user.id, i: args.instanceId, rp: rp.id, exp: deps.clock.now() + REGISTRATION_TTL_MS }),
      );
      return create(StartWebauthnRegistrationResponseSchema, { optionsJson: JSON.stringify(options), registrationToken: token });
    },

    async finishWebauthnRegistration(req: FinishWebauthnRegistrationRequest, ctx: HandlerContext) {
      const { user, args } = await resolve(ctx, req.id);
      const sealed = openToken(req.registrationToken, args.instanceId, user.id);
      const origin = checkedOrigin(req.origin, sealed.rp);
      let response: RegistrationResponseJSON;
      try {
        response = JSON.parse(req.credentialJson);
      } catch {
        throw errors.invalidArgument("WEBAUTHN-j5n1", "credential_json: not JSON");
      }
      if (!response || typeof response !== "object" || Array.isArray(response))
        throw errors.invalidArgument("WEBAUTHN-j5n2", "credential_json: not a credential");
      const r = await webauthn
        .finishWebauthnRegistration(deps.es, {
          instanceId: args.instanceId,
          userId: user.id,
          creator: args.creator,
          rp: { id: sealed.rp, origin, name: sealed.rp },
          challenge: sealed.ch,
          purpose: sealed.p ? "passwordless" : "u2f",
          name: req.name,
          response,
        })
        .catch((e: unknown) => {
          // The command names `credential`; over the API that is the credential_json field.
          if (e instanceof ConnectError && e.code === Code.InvalidArgument) {
            throw errors.invalidArgument("WEBAUTHN-j5n3", `credential_json${e.rawMessage.replace(/^.*?credential/, "")}`);
          }
          throw e;
        });
      return create(FinishWebauthnRegistrationResponseSchema, { details: details(r.details), keyId: r.keyId });
    },

    async listWebauthnKeys(req: ListWebauthnKeysRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const keys = await webauthn.listWebauthnKeys(deps.db, args.instanceId, args.id);
      return create(ListWebauthnKeysResponseSchema, {
        keys: keys.map((k) =>
          create(WebauthnKeySchema, { id: k.id, name: k.name, passwordless: k.passwordless, creationDate: timestampFromDate(k.createdAt) }),
        ),
      });
    },

    async removeWebauthnKey(req: RemoveWebauthnKeyRequest, ctx: HandlerContext) {
      const { args } = await resolve(ctx, req.id);
      const d = await webauthn.removeWebauthnKey(deps.es, { instanceId: args.instanceId, userId: args.id, creator: args.creator, keyId: req.keyId });
      return create(RemoveWebauthnKeyResponseSchema, { details: details(d) });
    },
  };
}
