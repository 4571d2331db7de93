import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type IdentityProviderIntentService,
  RetrieveIDPIntentResponseSchema,
  StartIDPIntentResponseSchema,
} from "../../../gen/svc/resources/idp/v3alpha/idp_intent_service_pb.js";
import { DetailsSchema } from "../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { callInfo, clientOf } from "../../authz/context.js";
import { type IntentResult, intentResult, startIntent, succeedIntent } from "../../command/idp-intents.js";
import type { SecretBox } from "../../crypto/secrets.js";
import type { Client } from "../../domain/forwarded.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import { isTooManyFailures, type SignInLimits } from "../../command/failure-limits.js";
import { lockoutOf } from "../../command/login.js";
import { directorySignIn } from "../../federation/directory-sign-in.js";
import type { LdapFederation } from "../../federation/ldap.js";
import type { SettingsQueries } from "../../query/settings.js";
import type { Database } from "../../storage/database.js";
import type { RedirectProtocols } from "../../federation/redirect.js";
import { storedProviderOf } from "../../federation/stored.js";
import type { IdpQueries } from "../../query/idps.js";
import type { UserQueries } from "../../query/users.js";
import { postFormHtml } from "../../web/pages.js";

/**
 * The intents API (proto svc.resources.idp.v3alpha.IdentityProviderIntentService): sign-in through external
 * identity providers for custom login UIs. The browser's round trip ends at the login UI's callback
 * (src/login/idp.ts), which completes the intent and sends the browser to the caller's success or failure URL;
 * a directory answers at once. The caller then retrieves the result and checks the intent in a session.
 */
export interface IdpIntentDeps {
  es: EventStore;
  db: Database;
  settings: SettingsQueries;
  /** Failed directory sign-ins per account (no address: the caller is a login UI serving everyone). */
  limits?: SignInLimits | undefined;
  box: SecretBox;
  idps: IdpQueries;
  users: UserQueries;
  protocols: RedirectProtocols;
  directories: LdapFederation;
  /** This server's issuer for a request (the callback URL registered at providers is `<issuer>/idps/callback`). */
  issuerOf(client: Client): string;
  clock: { now(): number };
}

export function idpIntentService(deps: IdpIntentDeps): ServiceImpl<typeof IdentityProviderIntentService> {
  const { es, box, idps, users } = deps;
  const instanceOf = (ctx: HandlerContext) => callInfo(ctx).target.instance.id;
  const details = (id: string) => create(DetailsSchema, { id, changeDate: timestampFromDate(new Date(deps.clock.now())) });

  /** The provider, when it is of the instance (or the system) and active there, or in the organisation that owns it. */
  async function usableProvider(instanceId: string, idpId: string) {
    const notFound = () => errors.notFound("IDPI-n0tf", `idp_id: identity provider "${idpId.slice(0, 200)}" not found or not active`);
    const row = await idps.usableForIntent(instanceId, idpId);
    if (!row) throw notFound();
    const stored = storedProviderOf(row, box);
    if (!stored) throw notFound();
    return { row, stored };
  }

  const linkedUserId = async (instanceId: string, r: IntentResult) => (await users.byExternalAccount(instanceId, r.idpId, r.externalUserId))?.id ?? "";

  return {
    async startIDPIntent(req, ctx) {
      const instanceId = instanceOf(ctx);
      const { row, stored } = await usableProvider(instanceId, req.idpId);
      if (stored.kind === "ldap") {
        if (!req.ldap) throw errors.invalidArgument("IDPI-ld4p", "invalid ldap: the username and password at the directory are required for an LDAP provider");
        // Counted as the login UI's form counts it: the failure limits, the linked account's lockout.
        const answer = await directorySignIn(deps, {
          instanceId,
          provider: stored,
          loginName: req.ldap.username,
          password: req.ldap.password,
          limits: deps.limits,
          lockout: lockoutOf(deps.settings, instanceId, box),
        });
        if (isTooManyFailures(answer))
          throw errors.resourceExhausted("IDPI-l1m1", `too many failed sign-ins at this directory: retry after ${answer.retryAfterS} s`);
        if (!answer) throw errors.invalidArgument("IDPI-ldpw", "invalid ldap: the username or password is wrong");
        if ("unreachable" in answer) throw errors.failedPrecondition("IDPI-ld0w", "the directory could not be asked");
        const u = answer.user;
        const result: IntentResult = { idpId: row.id, externalUserId: u.id, externalUserName: u.username ?? u.id, raw: u.raw };
        const intent = await succeedIntent(es, box, { instanceId, result });
        return create(StartIDPIntentResponseSchema, {
          details: details(intent.id),
          idpIntent: { idpIntentId: intent.id, idpIntentToken: intent.token, userId: await linkedUserId(instanceId, result) },
        });
      }
      if (req.ldap) throw errors.invalidArgument("IDPI-n0ld", "invalid ldap: only an LDAP provider takes a username and password");
      if (!req.successUrl || !req.failureUrl) throw errors.invalidArgument("IDPI-url0", "invalid success_url: success_url and failure_url are required");
      const protocol = deps.protocols.of(stored);
      if (!protocol) throw errors.failedPrecondition("IDPI-k1nd", `idp_id: providers of kind ${stored.kind} cannot be signed in with through an intent`);
      let start: Awaited<ReturnType<typeof protocol.start>>;
      try {
        start = await protocol.start(`${deps.issuerOf(clientOf(ctx))}/idps/callback`);
      } catch {
        throw errors.failedPrecondition("IDPI-d1sc", "the identity provider could not be reached (its discovery failed)");
      }
      const id = await startIntent(es, box, {
        instanceId,
        idpId: row.id,
        state: start.state,
        binding: "",
        codeVerifier: start.codeVerifier,
        nonce: start.nonce,
        returnTo: "",
        api: { successUrl: req.successUrl, failureUrl: req.failureUrl },
      });
      return create(StartIDPIntentResponseSchema, {
        details: details(id),
        authUrl: start.url,
        // SAML's HTTP-POST binding: the login UI shows this form (its button posts the request to the provider).
        postForm: start.form ? postFormHtml(start.form.action, start.form.fields, "Continue") : "",
      });
    },

    async retrieveIDPIntent(req, ctx) {
      const instanceId = instanceOf(ctx);
      const result = await intentResult(es, box, { instanceId, id: req.id, token: req.idpIntentToken, consume: false });
      if (!result) throw errors.notFound("IDPI-r3tr", `intent "${req.id.slice(0, 200)}" not found, not succeeded, used or expired, or the token is wrong`);
      return create(RetrieveIDPIntentResponseSchema, {
        details: details(req.id),
        userId: await linkedUserId(instanceId, result),
        idpInformation: {
          idpId: result.idpId,
          userId: result.externalUserId,
          userName: result.externalUserName,
          rawInformation: result.raw as JsonObject,
          accessToken: result.accessToken ?? "",
          idToken: result.idToken ?? "",
        },
      });
    },
  };
}
