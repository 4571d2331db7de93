// The sections only a human has: e-mail address, phone number, password, second factors and passkeys.
import { Code } from "@connectrpc/connect";
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import type { GetHumanUser } from "../../../../gen/svc/resources/user/v3alpha/user_pb.js";
import { AuthenticationMethodType, UserService, type WebauthnKey } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";
import { Checkbox, type Column, ConfirmButton, DataTable, ErrorText, Field, Status, useDate, useRun } from "../../ui";
import { useCanIn, useChange } from "./common";
import type { SectionProps } from "./detail";
import { ContactFields } from "./fields";

/** The code sent to an address or number, to verify it; or a new code. */
function VerifyCode({
  title,
  hint,
  form,
  onVerify,
  onResend,
  done,
}: {
  title: string;
  hint: string;
  form: ReturnType<typeof useRun>;
  onVerify: (code: string) => Promise<unknown>;
  onResend: () => Promise<unknown>;
  done: string;
}) {
  const t = useT(messages);
  const [code, setCode] = useState("");
  return (
    <>
      <h3>{title}</h3>
      <p className="hint">{hint}</p>
      <form
        className="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void form.run(async () => {
            await onVerify(code.trim());
            setCode("");
          }, done);
        }}
      >
        <Field
          label={t("code")}
          name="verification_code"
          required
          autoComplete="off"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          error={form.error}
        />
        <div className="field">
          <button type="submit" disabled={form.busy}>
            {t("verify")}
          </button>
        </div>
        <div className="field">
          <button type="button" disabled={form.busy} onClick={() => form.run(onResend, t("codeSent"))}>
            {t("resendCode")}
          </button>
        </div>
      </form>
    </>
  );
}

function humanOf(props: SectionProps): GetHumanUser | undefined {
  return props.user.type.case === "human" ? props.user.type.value : undefined;
}

export function EmailSection(props: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(props.orgId);
  const id = props.user.details?.id ?? "";
  const email = humanOf(props)?.email;
  const form = useRun();
  const patch = useChange(UserService.method.patchUser);
  const resend = useChange(UserService.method.resendEmailCode);
  const verify = useChange(UserService.method.verifyEmail);
  const [address, setAddress] = useState(email?.address ?? "");
  const [verified, setVerified] = useState(false);
  const writable = can("user.write");
  return (
    <section className="card">
      <h2>{t("email")}</h2>
      <p>
        {email?.address} <strong>{email?.isVerified ? t("verified") : t("notVerified")}</strong>
      </p>
      <ErrorText error={form.error} fields={["user.human.email.address", "verification_code"]} />
      {writable && (
        <>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void form.run(
                () => patch.mutateAsync({ id, user: { type: { case: "human", value: { email: { address: address.trim(), isVerified: verified } } } } }),
                c("saved"),
              );
            }}
          >
            <ContactFields
              kind="email"
              label={t("newEmail")}
              required
              value={[address, setAddress]}
              verified={[verified, setVerified]}
              verifiedLabel={t("markVerified")}
              error={form.error}
            />
            <button type="submit" className="primary" disabled={form.busy}>
              {t("changeEmail")}
            </button>
          </form>
          {email?.address && !email.isVerified && (
            <VerifyCode
              title={t("verifyEmail")}
              hint={t("verifyEmailHint")}
              form={form}
              onVerify={(code) => verify.mutateAsync({ id, verificationCode: code })}
              onResend={() => resend.mutateAsync({ id, returnCode: false })}
              done={t("emailVerifiedDone")}
            />
          )}
        </>
      )}
      <Status text={form.status} />
    </section>
  );
}

export function PhoneSection(props: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(props.orgId);
  const id = props.user.details?.id ?? "";
  const phone = humanOf(props)?.phone;
  const form = useRun();
  const patch = useChange(UserService.method.patchUser);
  const resend = useChange(UserService.method.resendPhoneCode);
  const verify = useChange(UserService.method.verifyPhone);
  const [number, setNumber] = useState(phone?.number ?? "");
  const [verified, setVerified] = useState(false);
  const writable = can("user.write");
  return (
    <section className="card">
      <h2>{t("phone")}</h2>
      <p>
        {phone?.number ? (
          <>
            {phone.number} <strong>{phone.isVerified ? t("verified") : t("notVerified")}</strong>
          </>
        ) : (
          t("noPhone")
        )}
      </p>
      <ErrorText error={form.error} fields={["user.human.phone.number", "verification_code"]} />
      {writable && (
        <>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void form.run(
                () => patch.mutateAsync({ id, user: { type: { case: "human", value: { phone: { number: number.trim(), isVerified: verified } } } } }),
                c("saved"),
              );
            }}
          >
            <ContactFields
              kind="phone"
              label={t("newPhone")}
              required
              hint={t("phoneHint")}
              value={[number, setNumber]}
              verified={[verified, setVerified]}
              verifiedLabel={t("markVerified")}
              error={form.error}
            />
            <div className="buttons">
              <button type="submit" className="primary" disabled={form.busy}>
                {t("changePhone")}
              </button>
              {phone?.number && (
                <ConfirmButton
                  label={t("removePhone")}
                  question={t("confirmRemovePhone", { number: phone.number })}
                  onConfirm={async () => {
                    const r = await form.run(
                      () => patch.mutateAsync({ id, user: { type: { case: "human", value: { phone: { number: "" } } } } }),
                      t("removedDone"),
                    );
                    if (r) setNumber("");
                  }}
                />
              )}
            </div>
          </form>
          {phone?.number && !phone.isVerified && (
            <VerifyCode
              title={t("verifyPhone")}
              hint={t("verifyPhoneHint")}
              form={form}
              onVerify={(code) => verify.mutateAsync({ id, verificationCode: code })}
              onResend={() => resend.mutateAsync({ id, returnCode: false })}
              done={t("phoneVerifiedDone")}
            />
          )}
        </>
      )}
      <Status text={form.status} />
    </section>
  );
}

export function PasswordSection(props: SectionProps) {
  const t = useT(messages);
  const can = useCanIn(props.orgId);
  const date = useDate();
  const id = props.user.details?.id ?? "";
  const human = humanOf(props);
  const form = useRun();
  const set = useChange(UserService.method.setPassword);
  const reset = useChange(UserService.method.requestPasswordReset);
  const [password, setPassword] = useState("");
  const [changeRequired, setChangeRequired] = useState(true);
  if (!can("user.write")) return null;
  return (
    <section className="card">
      <h2>{t("password")}</h2>
      <p>{human?.passwordChanged ? t("passwordSetOn", { date: date(human.passwordChanged) }) : t("noPassword")}</p>
      <ErrorText error={form.error} fields={["password.password"]} />
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await form.run(
            () => set.mutateAsync({ id, password: { value: { case: "password", value: password }, changeRequired } }),
            t("passwordSetDone"),
          );
          if (r) setPassword("");
        }}
      >
        <Field
          label={t("newPassword")}
          name="password.password"
          type="password"
          autoComplete="new-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={form.error}
        />
        <Checkbox label={t("changeRequired")} name="password.change_required" checked={changeRequired} onChange={setChangeRequired} />
        <div className="buttons">
          <button type="submit" className="primary" disabled={form.busy}>
            {t("setPassword")}
          </button>
          {human?.email?.address && (
            <button type="button" disabled={form.busy} onClick={() => form.run(() => reset.mutateAsync({ id, returnCode: false }), t("resetSent"))}>
              {t("sendReset")}
            </button>
          )}
        </div>
      </form>
      <Status text={form.status} />
    </section>
  );
}

export function FactorsSection(props: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(props.orgId);
  const date = useDate();
  const id = props.user.details?.id ?? "";
  const keys = useQuery(UserService.method.listWebauthnKeys, { id });
  const methods = useQuery(UserService.method.listAuthenticationMethodTypes, { id });
  const form = useRun();
  const removeKey = useChange(UserService.method.removeWebauthnKey);
  const removeTotp = useChange(UserService.method.removeTotp);
  const removeOtpEmail = useChange(UserService.method.removeOtpEmail);
  const removeOtpSms = useChange(UserService.method.removeOtpSms);
  const writable = can("user.write");

  /** Removes a factor; one that is not set up (NOT_FOUND) is said so rather than shown as an error. */
  const factorAction = (fn: () => Promise<unknown>) =>
    form.run(async () => {
      try {
        await fn();
        return t("removedDone");
      } catch (err) {
        if (errorOf(err).code === Code.NotFound) return t("factorNotSetUp");
        throw err;
      }
    });

  const columns: Column<WebauthnKey>[] = [
    { key: "name", label: c("name"), render: (k) => k.name },
    { key: "kind", label: t("kind"), render: (k) => (k.passwordless ? t("passkey") : t("securityKey")) },
    { key: "created", label: t("registered"), render: (k) => date(k.creationDate) },
  ];
  if (writable) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (k) => (
        <ConfirmButton
          label={c("remove")}
          question={t("confirmRemoveKey", { name: k.name })}
          onConfirm={() => form.run(() => removeKey.mutateAsync({ id, keyId: k.id }), t("removedDone"))}
        />
      ),
    });
  }

  const inUse = new Set(methods.data?.authMethodTypes ?? []);
  const other = [
    {
      type: AuthenticationMethodType.TOTP,
      name: t("methodTotp"),
      label: t("removeTotp"),
      question: t("confirmRemoveTotp"),
      remove: () => removeTotp.mutateAsync({ id }),
    },
    {
      type: AuthenticationMethodType.OTP_EMAIL,
      name: t("methodOtpEmail"),
      label: t("removeOtpEmail"),
      question: t("confirmRemoveOtpEmail"),
      remove: () => removeOtpEmail.mutateAsync({ id }),
    },
    {
      type: AuthenticationMethodType.OTP_SMS,
      name: t("methodOtpSms"),
      label: t("removeOtpSms"),
      question: t("confirmRemoveOtpSms"),
      remove: () => removeOtpSms.mutateAsync({ id }),
    },
  ].filter((o) => inUse.has(o.type));

  return (
    <section className="card">
      <h2>{t("factors")}</h2>
      <ErrorText error={form.error ?? (keys.error ? errorOf(keys.error) : undefined)} />
      <DataTable caption={t("webauthnKeys")} columns={columns} rows={keys.data?.keys} rowKey={(k) => k.id} loading={keys.isFetching} />
      <h3>{t("otherFactors")}</h3>
      <p className="hint">{t("otherFactorsHint")}</p>
      {methods.isSuccess && other.length === 0 && <p>{t("noOtherFactors")}</p>}
      <ul className="plain">
        {other.map((o) => (
          <li key={o.type}>
            {o.name}{" "}
            {writable && (
              <ConfirmButton
                label={o.label}
                question={o.question}
                onConfirm={async () => {
                  const said = await factorAction(o.remove);
                  if (said) form.setStatus(said);
                }}
              />
            )}
          </li>
        ))}
      </ul>
      <Status text={form.status} />
    </section>
  );
}
