// What the SMTP and SMS screens share: the user's permissions, a provider's state with (de)activation, a test message
// through it, and its deletion.
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { NotificationProviderService } from "../../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { State } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useAccess } from "../../access";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/notifications";
import { navigate } from "../../router";
import { BackLink, ConfirmButton, ErrorText, Field, type FormError, Page, Status, useRun } from "../../ui";

const S = NotificationProviderService.method;

export function usePerms() {
  const access = useAccess();
  return { write: access.everywhere("notification.provider.write"), del: access.everywhere("notification.provider.delete") };
}

type Kind = "smtp" | "sms";

/**
 * The page of a new provider or of one (`item`): the link back, its state, the card of its settings (the form and its
 * status line), a test message and its deletion; `after` below (a secret shown once).
 */
export function ProviderPage({
  kind,
  title,
  item,
  status,
  after,
  children,
}: {
  kind: Kind;
  title: string;
  item?: { id: string; state: State };
  status: string;
  after?: ReactNode;
  children: ReactNode;
}) {
  const t = useT(messages);
  const perms = usePerms();
  return (
    <Page title={title}>
      <BackLink to="/notifications" />
      {item && <ProviderState kind={kind} id={item.id} state={item.state} />}
      <section className="card">
        <h2>{t("settings")}</h2>
        {children}
        <Status text={status} />
      </section>
      {item && perms.write && <ProviderTest kind={kind} id={item.id} />}
      {item && <ProviderDelete kind={kind} id={item.id} name={title} />}
      {after}
    </Page>
  );
}

export type CoreT = (key: keyof (typeof coreMessages)["en"], values?: Record<string, string | number>) => string;

export function stateText(c: CoreT, s: State | undefined) {
  return s === State.EFFECTIVE_STATE_ACTIVE ? c("active") : c("inactive");
}

export function ProviderState({ kind, id, state }: { kind: "smtp" | "sms"; id: string; state: State }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const activateSmtp = useMutation(S.activateSMTPProvider);
  const deactivateSmtp = useMutation(S.deactivateSMTPProvider);
  const activateSms = useMutation(S.activateSMSProvider);
  const deactivateSms = useMutation(S.deactivateSMSProvider);
  const form = useRun();
  const active = state === State.EFFECTIVE_STATE_ACTIVE;
  return (
    <section className="card">
      <h2>{c("state")}</h2>
      <p>
        <strong>{stateText(c, state)}</strong>: {active ? t("activeNote") : t("inactiveNote")}
      </p>
      <ErrorText error={form.error} />
      {perms.write && (
        <div className="buttons">
          {active ? (
            <button
              type="button"
              onClick={() =>
                form.run(async () => {
                  await (kind === "smtp" ? deactivateSmtp : deactivateSms).mutateAsync({ id });
                  await qc.invalidateQueries();
                }, t("deactivated"))
              }
            >
              {c("deactivate")}
            </button>
          ) : (
            <button
              type="button"
              className="primary"
              onClick={() =>
                form.run(async () => {
                  await (kind === "smtp" ? activateSmtp : activateSms).mutateAsync({ id });
                  await qc.invalidateQueries();
                }, t("activated"))
              }
            >
              {t("activate")}
            </button>
          )}
        </div>
      )}
      <Status text={form.status} />
    </section>
  );
}

export function ProviderTest({ kind, id }: { kind: "smtp" | "sms"; id: string }) {
  const t = useT(messages);
  const testSmtp = useMutation(S.testSMTPProvider);
  const testSms = useMutation(S.testSMSProvider);
  const [receiver, setReceiver] = useState("");
  const [result, setResult] = useState<{ ok: true } | { ok: false; error: FormError }>();
  const pending = testSmtp.isPending || testSms.isPending;
  const field = kind === "smtp" ? "receiver_address" : "receiver_phone";
  const failure = result && !result.ok ? result.error : undefined;
  return (
    <section className="card">
      <h2>{t("test")}</h2>
      <p>{kind === "smtp" ? t("testSmtpIntro") : t("testSmsIntro")}</p>
      <form
        noValidate
        className="toolbar"
        onSubmit={async (e) => {
          e.preventDefault();
          setResult(undefined);
          try {
            if (kind === "smtp") await testSmtp.mutateAsync({ id, receiverAddress: receiver.trim() });
            else await testSms.mutateAsync({ id, receiverPhone: receiver.trim() });
            setResult({ ok: true });
          } catch (err) {
            setResult({ ok: false, error: errorOf(err) });
          }
        }}
      >
        <Field
          label={kind === "smtp" ? t("receiverAddress") : t("receiverPhone")}
          name={field}
          type={kind === "smtp" ? "email" : "tel"}
          value={receiver}
          onChange={(e) => setReceiver(e.target.value)}
          error={failure}
          required
        />
        <div className="field">
          <button type="submit" disabled={pending}>
            {pending ? t("testSending") : t("sendTest")}
          </button>
        </div>
      </form>
      {failure && failure.field !== field && (
        <div role="alert" className="error-box">
          <strong>{t("testFailed")}</strong> {failure.message}
        </div>
      )}
      <Status text={result?.ok ? (kind === "smtp" ? t("testMailOk") : t("testSmsOk")) : ""} />
    </section>
  );
}

export function ProviderDelete({ kind, id, name }: { kind: "smtp" | "sms"; id: string; name: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const delSmtp = useMutation(S.deleteSMTPProvider);
  const delSms = useMutation(S.deleteSMSProvider);
  const form = useRun();
  if (!perms.del) return null;
  return (
    <section className="card">
      <h2>{t("deleteSection")}</h2>
      <ErrorText error={form.error} />
      <ConfirmButton
        label={c("delete")}
        question={c("confirmDelete", { name })}
        onConfirm={async () => {
          const ok = await form.run<unknown>(() => (kind === "smtp" ? delSmtp : delSms).mutateAsync({ id }), t("deleted"));
          if (ok) {
            // the deleted one is not read again: only marked stale, the list reads anew when shown
            await qc.invalidateQueries({ refetchType: "none" });
            navigate("/notifications");
          }
        }}
      />
      <Status text={form.status} />
    </section>
  );
}
