import type { FastifyInstance } from "fastify";
import { registerAssets } from "./assets.js";
import { finishStep } from "./finish.js";
import { registerExternalSignIn } from "./idp.js";
import { registerDirectorySignIn } from "./idp-ldap.js";
import { registerSamlServiceProvider } from "./idp-saml.js";
import { createLoginKit, type LoginDeps } from "./kit.js";
import { registerLoginName } from "./login-name.js";
import { registerLogout } from "./logout.js";
import { registerOtpCodes } from "./otp-codes.js";
import { registerOtpSetup } from "./otp-setup.js";
import { registerPassword } from "./password.js";
import { registerRecovery } from "./recovery.js";
import { registerRegistration } from "./register.js";
import { registerSelectAccount } from "./select-account.js";
import { registerTotp } from "./totp.js";
import { registerWebauthn } from "./webauthn.js";

/**
 * The login UI, in its own Fastify scope: the page kit (kit.ts: form parser, hooks, the per-request context, CSRF
 * checked posts) and one module per step, each registering its routes on it.
 */
export function registerLoginUi(app: FastifyInstance, deps: LoginDeps): void {
  app.register(async (ui) => {
    const kit = createLoginKit(ui, deps);
    const finish = finishStep(kit);
    registerAssets(kit);
    const totp = registerTotp(kit, finish);
    const otpSetup = registerOtpSetup(kit, finish);
    registerSelectAccount(kit);
    registerRegistration(kit, finish);
    registerRecovery(kit);
    const otpCodes = registerOtpCodes(kit, finish);
    const webauthn = registerWebauthn(kit, finish);
    // After the password, the second factors in this order: TOTP, a security key, a code by e-mail or SMS.
    const password = registerPassword(kit, { finish, secondFactors: [totp, webauthn, otpCodes], otpSetup, keySetupAtSignIn: webauthn.setupAtSignIn });
    // A sign-in through an external identity provider goes on as one with a password does: second factors included.
    const external = registerExternalSignIn(kit, { afterFirstFactor: password.afterFirstFactor, protocols: deps.protocols });
    registerDirectorySignIn(kit, external, deps.directories);
    registerSamlServiceProvider(kit, deps.protocols);
    registerLoginName(kit, external);
    registerLogout(kit);
  });
}
