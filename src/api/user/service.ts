import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  AddMachineKeyResponseSchema,
  AddPersonalAccessTokenResponseSchema,
  AddOtpEmailResponseSchema,
  AddOtpSmsResponseSchema,
  AddTotpResponseSchema,
  ChangePasswordResponseSchema,
  CreateUserResponseSchema,
  DeactivateUserResponseSchema,
  DeleteUserResponseSchema,
  GenerateClientSecretResponseSchema,
  GetUserResponseSchema,
  AuthenticationMethodType,
  ListAuthenticationMethodTypesResponseSchema,
  ListMachineCredentialsResponseSchema,
  LockUserResponseSchema,
  MachineCredentialSchema,
  PatchUserResponseSchema,
  ReactivateUserResponseSchema,
  RemoveClientSecretResponseSchema,
  RemoveMachineKeyResponseSchema,
  RemovePersonalAccessTokenResponseSchema,
  RemoveOtpEmailResponseSchema,
  RemoveOtpSmsResponseSchema,
  RemoveTotpResponseSchema,
  RequestPasswordResetResponseSchema,
  ResendEmailCodeResponseSchema,
  ResendPhoneCodeResponseSchema,
  SearchUsersResponseSchema,
  SetPasswordResponseSchema,
  UnlockUserResponseSchema,
  VerifyEmailResponseSchema,
  VerifyPhoneResponseSchema,
  VerifyTotpResponseSchema,
  type UserService,
} from "../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { callInfo } from "../../authz/context.js";
import { describeMembership } from "../../authz/permissions.js";
import type { ChangeDetails } from "../../command/aggregate.js";
import * as otpCodes from "../../command/otp-codes.js";
import * as totp from "../../command/totp.js";
import type { SignInLimits } from "../../command/failure-limits.js";
import { changePasswordWithCurrent } from "../../command/login.js";
import * as codes from "../../command/user-codes.js";
import * as users from "../../command/users.js";
import { hashPassword } from "../../crypto/password.js";
import type { SecretBox } from "../../crypto/secrets.js";
import type { Clock } from "../../domain/clock.js";
import { errors } from "../../errors/errors.js";
import type { EventStore } from "../../eventstore/eventstore.js";
import type { ProjectionCache } from "../../query/cache.js";
import { passwordRules } from "../../query/password-rules.js";
import type { SettingsQueries } from "../../query/settings.js";
import type { TenancyQueries } from "../../query/tenancy.js";
import { UserQueries } from "../../query/users.js";
import type { Database } from "../../storage/database.js";
import { toResourceDetails } from "../convert.js";
import { listDetails, listWindow } from "../list.js";
import { loadAuthorized, orgOfRequest, orgTarget, readableScope } from "../scope.js";
import { newUserOf, passwordInputOf, patchOf, schemaDataOf, toGetUser } from "./convert.js";
import { metadataHandlers } from "./metadata.js";
import { idpLinkHandlers } from "./idp-links.js";
import { userSearchOf } from "./search.js";
import { webauthnHandlers } from "./webauthn.js";

export interface UserDeps {
  es: EventStore;
  db: Database;
  cache: ProjectionCache;
  settings: SettingsQueries;
  tenancy: TenancyQueries;
  /** Seals TOTP secrets and the codes sent to users. */
  box: SecretBox;
  /** Failed checks of a current password per account (SVC_RATE_LIMIT_SIGNIN_FAILURES_ACCOUNT). */
  limits?: SignInLimits | undefined;
  /** The time expirations are checked against (src/domain/clock.ts). */
  clock: Clock;
}

export function userService(deps: UserDeps): ServiceImpl<typeof UserService> {
  const { es, tenancy } = deps;
  const userQueries = new UserQueries(deps.db, deps.cache);
  const details = (d: ChangeDetails) => toResourceDetails(d, "org");

  /**
   * The user a request names, checked in its organisation. Users of other instances are NOT_FOUND. Every RPC
   * that changes the user (its declared permission is not a read) also meets the privilege ceiling: the caller
   * must hold whatever the user's memberships give, where they give it; except a change the user's own secret
   * proves (`provenByUser`: the current password or a code sent to the user), which gives the caller nothing.
   */
  async function resolve(ctx: HandlerContext, id: string, provenByUser = false) {
    const notFound = () => errors.notFound("USER-n0t1", `user "${id}" not found`);
    const { row, args, info } = await loadAuthorized(
      ctx,
      tenancy,
      id,
      (i) => userQueries.byId(i, id),
      notFound,
      (u) => ({ orgId: u.orgId }),
    );
    if (!provenByUser && !info.permission.endsWith(".read")) {
      const above = await info.uncovered(row.id);
      if (above) {
        throw errors.permissionDenied(
          "USER-c3il",
          `the user is a member with ${describeMembership(above)}: only a caller holding those permissions there may change its credentials, state or factors`,
        );
      }
    }
    return { user: row, args };
  }

  return {
    ...webauthnHandlers(deps, resolve, details),
    ...metadataHandlers(deps, resolve, details),
    ...idpLinkHandlers(deps, resolve, details),
    async createUser(req, ctx) {
      const info = callInfo(ctx);
      const instance = info.target.instance;
      const orgId = orgOfRequest(info);
      info.authorize(await orgTarget(tenancy, instance, orgId));
      const { human, machine, password } = newUserOf(req.user!);
      const base: { instanceId: string; orgId: string; creator: string; schemaData?: users.SchemaData } = {
        instanceId: instance.id,
        orgId,
        creator: info.caller.userId,
      };
      let d: ChangeDetails;
      const schemaData = schemaDataOf(req.user!);
      if (schemaData) Object.assign(base, { schemaData });
      if (machine) d = await users.createMachine(es, { ...base, machine });
      else {
        // The password rules only for a password (most creations by an API come without one).
        const passwordHash = password
          ? await users.passwordHashOf(password, (await passwordRules(deps.settings, instance.id, orgId)).problem, "user.human.password")
          : undefined;
        d = await users.createHuman(es, {
          ...base,
          box: deps.box,
          human: human!,
          ...(passwordHash ? { passwordHash, passwordChangeRequired: password!.changeRequired } : {}),
        });
      }
      return create(CreateUserResponseSchema, { details: details(d) });
    },

    async patchUser(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(PatchUserResponseSchema, { details: details(await users.patchUser(es, { ...args, patch: patchOf(req.user!), box: deps.box })) });
    },

    async getUser(req, ctx) {
      const { user } = await resolve(ctx, req.id);
      return create(GetUserResponseSchema, { user: toGetUser(user) });
    },

    async deleteUser(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeleteUserResponseSchema, { details: details(await users.deleteUser(es, args)) });
    },

    async searchUsers(req, ctx) {
      const info = callInfo(ctx);
      const page = await userQueries.search(info.target.instance.id, readableScope(info, "user.read"), userSearchOf(req), listWindow(req.query));
      return create(SearchUsersResponseSchema, { details: listDetails(page), sortingColumn: req.sortingColumn, result: page.rows.map(toGetUser) });
    },

    async lockUser(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(LockUserResponseSchema, { details: details(await users.changeUserState(es, { ...args, action: "lock" })) });
    },

    async unlockUser(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(UnlockUserResponseSchema, { details: details(await users.changeUserState(es, { ...args, action: "unlock" })) });
    },

    async deactivateUser(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(DeactivateUserResponseSchema, { details: details(await users.changeUserState(es, { ...args, action: "deactivate" })) });
    },

    async reactivateUser(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(ReactivateUserResponseSchema, { details: details(await users.changeUserState(es, { ...args, action: "reactivate" })) });
    },

    async setPassword(req, ctx) {
      const { user, args } = await resolve(ctx, req.id);
      const input = passwordInputOf(req.password!);
      const rules = await passwordRules(deps.settings, args.instanceId, user.orgId);
      const passwordHash = await users.passwordHashOf(input, rules.problem, "password");
      const d = await users.setPassword(es, { ...args, passwordHash, changeRequired: input.changeRequired });
      return create(SetPasswordResponseSchema, { details: details(d) });
    },

    async resendEmailCode(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const r = await codes.resendCode(es, deps.box, { ...codeArgs(args), kind: "email", returnCode: req.returnCode });
      return create(ResendEmailCodeResponseSchema, { details: details(r.details), verificationCode: r.code ?? "" });
    },

    async verifyEmail(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const d = await codes.verifyCode(es, deps.box, { ...codeArgs(args), kind: "email", code: req.verificationCode });
      return create(VerifyEmailResponseSchema, { details: details(d) });
    },

    async resendPhoneCode(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const r = await codes.resendCode(es, deps.box, { ...codeArgs(args), kind: "phone", returnCode: req.returnCode });
      return create(ResendPhoneCodeResponseSchema, { details: details(r.details), verificationCode: r.code ?? "" });
    },

    async verifyPhone(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const d = await codes.verifyCode(es, deps.box, { ...codeArgs(args), kind: "phone", code: req.verificationCode });
      return create(VerifyPhoneResponseSchema, { details: details(d) });
    },

    async requestPasswordReset(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const r = await codes.requestPasswordCode(es, deps.box, { ...codeArgs(args), reason: "reset", returnCode: req.returnCode });
      return create(RequestPasswordResetResponseSchema, { details: details(r.details), verificationCode: r.code ?? "" });
    },

    async changePassword(req, ctx) {
      const { user, args } = await resolve(ctx, req.id, true);
      const rules = await passwordRules(deps.settings, args.instanceId, user.orgId);
      const problem = rules.problem(req.newPassword);
      if (problem) throw errors.invalidArgument("USER-nwpw", `invalid new_password: ${problem}`);
      const passwordHash = await hashPassword(req.newPassword);
      const who = codeArgs(args);
      const d =
        req.proof.case === "verificationCode"
          ? await codes.setPasswordWithCode(es, deps.box, { ...who, code: req.proof.value, passwordHash })
          : await changePasswordWithCurrent(es, deps.db, {
              ...who,
              maxAttempts: async (u) => (await passwordRules(deps.settings, u.instanceId, u.orgId)).maxAttempts,
              lockoutDurationS: async (u) => (await passwordRules(deps.settings, u.instanceId, u.orgId)).lockoutDurationS,
              box: deps.box,
              currentPassword: req.proof.value ?? "",
              passwordHash,
              limits: deps.limits,
            });
      return create(ChangePasswordResponseSchema, { details: details(d) });
    },

    async generateClientSecret(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const { details: d, clientId, secret } = await users.generateClientSecret(es, args);
      return create(GenerateClientSecretResponseSchema, { details: details(d), clientId, clientSecret: secret });
    },

    async removeClientSecret(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(RemoveClientSecretResponseSchema, { details: details(await users.removeClientSecret(es, args)) });
    },

    async addTotp(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const instance = callInfo(ctx).target.instance;
      const r = await totp.addTotp(es, deps.box, { instanceId: args.instanceId, userId: args.id, creator: args.creator, issuer: instance.name });
      return create(AddTotpResponseSchema, { details: details(r.details), secret: r.secret, uri: r.uri });
    },

    async verifyTotp(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const d = await totp.verifyTotp(es, deps.box, { instanceId: args.instanceId, userId: args.id, creator: args.creator, code: req.code });
      return create(VerifyTotpResponseSchema, { details: details(d) });
    },

    async removeTotp(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(RemoveTotpResponseSchema, {
        details: details(await totp.removeTotp(es, { instanceId: args.instanceId, userId: args.id, creator: args.creator })),
      });
    },

    async addOtpEmail(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(AddOtpEmailResponseSchema, { details: details(await otpCodes.addOtpChannel(es, { ...codeArgs(args), channel: "email" })) });
    },

    async removeOtpEmail(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(RemoveOtpEmailResponseSchema, { details: details(await otpCodes.removeOtpChannel(es, { ...codeArgs(args), channel: "email" })) });
    },

    async addOtpSms(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(AddOtpSmsResponseSchema, { details: details(await otpCodes.addOtpChannel(es, { ...codeArgs(args), channel: "sms" })) });
    },

    async removeOtpSms(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(RemoveOtpSmsResponseSchema, { details: details(await otpCodes.removeOtpChannel(es, { ...codeArgs(args), channel: "sms" })) });
    },

    async addMachineKey(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const expiresAt = expiryOf(req.expirationDate, "expiration_date", deps.clock);
      const r = await users.addMachineKey(es, { ...args, expiresAt });
      return create(AddMachineKeyResponseSchema, { details: details(r.details), keyId: r.keyId, keyContent: r.keyContent });
    },

    async removeMachineKey(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(RemoveMachineKeyResponseSchema, { details: details(await users.removeMachineKey(es, { ...args, keyId: req.keyId })) });
    },

    async addPersonalAccessToken(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      const expiresAt = expiryOf(req.expirationDate, "expiration_date", deps.clock);
      const r = await users.addPersonalAccessToken(es, { ...args, expiresAt });
      return create(AddPersonalAccessTokenResponseSchema, { details: details(r.details), tokenId: r.tokenId, token: r.token });
    },

    async removePersonalAccessToken(req, ctx) {
      const { args } = await resolve(ctx, req.id);
      return create(RemovePersonalAccessTokenResponseSchema, {
        details: details(await users.removePersonalAccessToken(es, { ...args, tokenId: req.tokenId })),
      });
    },

    async listAuthenticationMethodTypes(req, ctx) {
      const { user } = await resolve(ctx, req.id);
      if (user.kind !== "human") return create(ListAuthenticationMethodTypesResponseSchema, {});
      const has = await userQueries.authenticationMethods(user);
      const T = AuthenticationMethodType;
      const types = [
        [has.password, T.PASSWORD],
        [has.passkey, T.PASSKEY],
        [has.idp, T.IDP],
        [has.totp, T.TOTP],
        [has.u2f, T.U2F],
        [has.otpSms, T.OTP_SMS],
        [has.otpEmail, T.OTP_EMAIL],
      ] as const;
      return create(ListAuthenticationMethodTypesResponseSchema, { authMethodTypes: types.filter(([on]) => on).map(([, type]) => type) });
    },

    async listMachineCredentials(req, ctx) {
      const { user } = await resolve(ctx, req.id);
      const { keys, pats } = await userQueries.machineCredentials(user.id);
      const item = (kind: string) => (c: { id: string; createdAt: Date; expiresAt: Date | null }) =>
        create(MachineCredentialSchema, {
          id: c.id,
          kind,
          creationDate: timestampFromDate(c.createdAt),
          ...(c.expiresAt ? { expirationDate: timestampFromDate(c.expiresAt) } : {}),
        });
      return create(ListMachineCredentialsResponseSchema, { result: [...keys.map(item("key")), ...pats.map(item("pat"))] });
    },
  };
}

const codeArgs = (a: { instanceId: string; id: string; creator: string }) => ({ instanceId: a.instanceId, userId: a.id, creator: a.creator });

function expiryOf(t: Parameters<typeof timestampDate>[0] | undefined, field: string, clock: Clock): Date | null {
  if (!t) return null;
  const d = timestampDate(t);
  if (d.getTime() <= clock.now()) throw errors.invalidArgument("USER-3xp1", `invalid ${field}: must be in the future`);
  return d;
}
