// Login settings, password complexity and lockout: three kinds of the LoginSettingsService, one card each.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import {
  LoginSettingsService,
  type SetLockoutSettingsSchema,
  type SetLoginSettingsSchema,
  type SetPasswordComplexitySettingsSchema,
} from "../../../../gen/svc/settings/login/v3alpha/login_service_pb.js";
import { useT } from "../../i18n";
import { messages } from "../../i18n/settings";
import { SettingsPage, useLevel } from "./common";
import { type PropDef, ResolvedCard } from "./properties";

export function LoginSettings() {
  const t = useT(messages);
  const choice = useLevel();
  const { ctx } = choice;
  const login = useQuery(LoginSettingsService.method.resolveLoginSettings, { ctx });
  const complexity = useQuery(LoginSettingsService.method.resolvePasswordComplexitySettings, { ctx });
  const lockout = useQuery(LoginSettingsService.method.resolveLockoutSettings, { ctx });
  const setLogin = useMutation(LoginSettingsService.method.setLoginSettings);
  const setComplexity = useMutation(LoginSettingsService.method.setPasswordComplexitySettings);
  const setLockout = useMutation(LoginSettingsService.method.setLockoutSettings);

  const loginDefs: PropDef[] = [
    { name: "allow_register", label: t("allowRegister"), type: "bool", hint: t("allowRegisterHint") },
    { name: "allow_external_idp", label: t("allowExternalIdp"), type: "bool" },
    { name: "passwordless_allowed", label: t("passwordlessAllowed"), type: "bool" },
    { name: "force_mfa", label: t("forceMfa"), type: "bool" },
    { name: "force_mfa_local_only", label: t("forceMfaLocalOnly"), type: "bool" },
    {
      name: "second_factors",
      label: t("secondFactors"),
      type: "choices",
      options: [
        { value: "otp", label: t("factorOtp") },
        { value: "otp_email", label: t("factorOtpEmail") },
        { value: "otp_sms", label: t("factorOtpSms") },
        { value: "u2f", label: t("factorU2f") },
      ],
    },
    { name: "mfa_init_skip_lifetime", label: t("mfaInitSkipLifetime"), type: "duration", hint: t("mfaInitSkipLifetimeHint") },
    { name: "custom_login_url", label: t("customLoginUrl"), type: "string", inputType: "url", hint: t("customLoginUrlHint") },
  ];
  const complexityDefs: PropDef[] = [
    { name: "min_length", label: t("minLength"), type: "uint64", hint: t("minLengthHint") },
    { name: "has_uppercase", label: t("hasUppercase"), type: "bool" },
    { name: "has_lowercase", label: t("hasLowercase"), type: "bool" },
    { name: "has_number", label: t("hasNumber"), type: "bool" },
    { name: "has_symbol", label: t("hasSymbol"), type: "bool" },
  ];
  const lockoutDefs: PropDef[] = [
    { name: "max_password_attempts", label: t("maxPasswordAttempts"), type: "uint64", hint: t("maxPasswordAttemptsHint") },
    { name: "lockout_duration", label: t("lockoutDuration"), type: "duration", hint: t("lockoutDurationHint") },
  ];

  return (
    <SettingsPage title={t("loginTitle")} intro={t("loginIntro")} choice={choice}>
      <ResolvedCard
        title={t("loginCard")}
        defs={loginDefs}
        q={login}
        choice={choice}
        save={(s) => setLogin.mutateAsync({ ctx, settings: s as MessageInitShape<typeof SetLoginSettingsSchema> })}
      />
      <ResolvedCard
        title={t("complexityCard")}
        intro={t("complexityIntro")}
        defs={complexityDefs}
        q={complexity}
        choice={choice}
        save={(s) => setComplexity.mutateAsync({ ctx, settings: s as MessageInitShape<typeof SetPasswordComplexitySettingsSchema> })}
      />
      <ResolvedCard
        title={t("lockoutCard")}
        intro={t("lockoutIntro")}
        defs={lockoutDefs}
        q={lockout}
        choice={choice}
        save={(s) => setLockout.mutateAsync({ ctx, settings: s as MessageInitShape<typeof SetLockoutSettingsSchema> })}
      />
    </SettingsPage>
  );
}
