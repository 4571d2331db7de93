// An SMTP provider: its form, creating one and changing one.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { type GetSMTPProvider, SMTPTLSMode } from "../../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { NotificationProviderService } from "../../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/notifications";
import { navigate } from "../../router";
import { Checkbox, EditForm, Field, type FormError, Missing, Select, useRun } from "../../ui";
import { ProviderLists } from "./list";
import { ProviderPage, usePerms } from "./shared";

const S = NotificationProviderService.method;

interface SmtpValues {
  description: string;
  host: string;
  port: string;
  tls: SMTPTLSMode;
  user: string;
  password: string;
  removePassword: boolean;
  senderAddress: string;
  senderName: string;
  replyToAddress: string;
}

const SMTP_FIELDS = [
  "provider.description",
  "provider.host",
  "provider.port",
  "provider.tls",
  "provider.user",
  "provider.password",
  "provider.sender_address",
  "provider.sender_name",
  "provider.reply_to_address",
];

function smtpValuesOf(p: GetSMTPProvider | undefined): SmtpValues {
  const v = p?.provider;
  return {
    description: v?.description ?? "",
    host: v?.host ?? "",
    port: v?.port ? String(v.port) : "",
    tls: v?.tls ?? SMTPTLSMode.SMTP_TLS_MODE_UNSPECIFIED,
    user: v?.user ?? "",
    password: "",
    removePassword: false,
    senderAddress: v?.senderAddress ?? "",
    senderName: v?.senderName ?? "",
    replyToAddress: v?.replyToAddress ?? "",
  };
}

export function SmtpForm({
  initial,
  editing,
  disabled,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial: SmtpValues;
  editing: boolean;
  disabled: boolean;
  submitLabel: string;
  pending: boolean;
  error: FormError;
  onSubmit: (v: SmtpValues) => void;
}) {
  const t = useT(messages);
  const [v, setV] = useState(initial);
  const set = <K extends keyof SmtpValues>(k: K, value: SmtpValues[K]) => setV((o) => ({ ...o, [k]: value }));
  const tls = v.tls === SMTPTLSMode.SMTP_TLS_MODE_UNSPECIFIED ? SMTPTLSMode.SMTP_TLS_MODE_STARTTLS : v.tls;
  return (
    <EditForm fields={SMTP_FIELDS} error={error} disabled={disabled} submitLabel={submitLabel} pending={pending} onSubmit={() => onSubmit(v)}>
      <Field
        label={t("description")}
        name="provider.description"
        value={v.description}
        onChange={(e) => set("description", e.target.value)}
        error={error}
        hint={t("descriptionHint")}
      />
      <Field
        label={t("host")}
        name="provider.host"
        value={v.host}
        onChange={(e) => set("host", e.target.value)}
        error={error}
        hint={t("hostHint")}
        required
        autoCapitalize="none"
        spellCheck={false}
      />
      <Field
        label={t("port")}
        name="provider.port"
        type="number"
        min={0}
        max={65535}
        inputMode="numeric"
        value={v.port}
        onChange={(e) => set("port", e.target.value)}
        error={error}
        hint={t("portHint")}
      />
      <Select
        label={t("tls")}
        name="provider.tls"
        value={String(tls)}
        onChange={(x) => set("tls", Number(x) as SMTPTLSMode)}
        options={[
          { value: String(SMTPTLSMode.SMTP_TLS_MODE_STARTTLS), label: t("tlsStarttls") },
          { value: String(SMTPTLSMode.SMTP_TLS_MODE_TLS), label: t("tlsTls") },
          { value: String(SMTPTLSMode.SMTP_TLS_MODE_NONE), label: t("tlsNone") },
        ]}
        error={error}
      />
      <Field
        label={t("user")}
        name="provider.user"
        value={v.user}
        onChange={(e) => set("user", e.target.value)}
        error={error}
        hint={t("userHint")}
        autoComplete="off"
      />
      <Field
        label={t("password")}
        name="provider.password"
        type="password"
        autoComplete="new-password"
        value={v.password}
        onChange={(e) => set("password", e.target.value)}
        error={error}
        hint={editing ? t("passwordKeepHint") : t("passwordHint")}
        disabled={v.removePassword}
      />
      {editing && (
        <Checkbox label={t("removePassword")} name="provider.password.remove" checked={v.removePassword} onChange={(x) => set("removePassword", x)} />
      )}
      <Field
        label={t("senderAddress")}
        name="provider.sender_address"
        type="email"
        value={v.senderAddress}
        onChange={(e) => set("senderAddress", e.target.value)}
        error={error}
        required
      />
      <Field label={t("senderName")} name="provider.sender_name" value={v.senderName} onChange={(e) => set("senderName", e.target.value)} error={error} />
      <Field
        label={t("replyTo")}
        name="provider.reply_to_address"
        type="email"
        value={v.replyToAddress}
        onChange={(e) => set("replyToAddress", e.target.value)}
        error={error}
      />
    </EditForm>
  );
}

const portOf = (s: string) => {
  const n = Number(s.trim() || "0");
  return Number.isInteger(n) && n >= 0 ? n : -1;
};

export function SmtpCreate() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const createSmtp = useMutation(S.createSMTPProvider);
  const form = useRun();
  if (!perms.write) return <ProviderLists />;
  return (
    <ProviderPage kind="smtp" title={t("newSmtp")} status={form.status}>
      <SmtpForm
        initial={smtpValuesOf(undefined)}
        editing={false}
        disabled={false}
        submitLabel={c("create")}
        pending={createSmtp.isPending}
        error={form.error}
        onSubmit={(v) =>
          form.run(async () => {
            const res = await createSmtp.mutateAsync({
              provider: {
                description: v.description,
                host: v.host.trim(),
                port: portOf(v.port),
                tls: v.tls,
                user: v.user,
                password: v.password,
                senderAddress: v.senderAddress.trim(),
                senderName: v.senderName,
                replyToAddress: v.replyToAddress.trim(),
              },
            });
            await qc.invalidateQueries();
            navigate(`/notifications/smtp/${res.details?.id ?? ""}`);
          }, t("created"))
        }
      />
    </ProviderPage>
  );
}

export function SmtpItem({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const got = useQuery(S.getSMTPProvider, { id });
  const patch = useMutation(S.patchSMTPProvider);
  const form = useRun();
  const p = got.data?.provider;
  if (got.isPending) return <p role="status">{c("loading")}</p>;
  if (!p) return <Missing title={t("title")} error={got.error} back="/notifications" />;
  const title = p.provider?.description || p.provider?.host || id;
  return (
    <ProviderPage kind="smtp" title={title} item={{ id, state: p.state }} status={form.status}>
      <SmtpForm
        key={String(p.details?.sequence ?? "")}
        initial={smtpValuesOf(p)}
        editing
        disabled={!perms.write}
        submitLabel={c("save")}
        pending={patch.isPending}
        error={form.error}
        onSubmit={(v) =>
          form.run(async () => {
            await patch.mutateAsync({
              id,
              provider: {
                description: v.description,
                host: v.host.trim(),
                port: portOf(v.port),
                tls: v.tls,
                user: v.user,
                ...(v.removePassword ? { password: "" } : v.password ? { password: v.password } : {}),
                senderAddress: v.senderAddress.trim(),
                senderName: v.senderName,
                replyToAddress: v.replyToAddress.trim(),
              },
            });
            await qc.invalidateQueries();
          }, c("saved"))
        }
      />
    </ProviderPage>
  );
}
