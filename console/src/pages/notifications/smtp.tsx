// An SMTP provider: its form, creating one and changing one.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type GetSMTPProvider, SMTPTLSMode } from "../../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { NotificationProviderService } from "../../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { useT } from "../../i18n";
import { messages } from "../../i18n/notifications";
import { navigate } from "../../router";
import { Checkbox, Field, Select } from "../../ui";
import { ProviderCreate, ProviderForm, type ProviderFormProps, ProviderItem } from "./provider-form";

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

export function SmtpForm(props: ProviderFormProps<SmtpValues>) {
  const t = useT(messages);
  const { editing, error } = props;
  return (
    <ProviderForm
      {...props}
      fields={SMTP_FIELDS}
      body={(v, set) => {
        const tls = v.tls === SMTPTLSMode.SMTP_TLS_MODE_UNSPECIFIED ? SMTPTLSMode.SMTP_TLS_MODE_STARTTLS : v.tls;
        return (
          <>
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
          </>
        );
      }}
    />
  );
}

const portOf = (s: string) => {
  const n = Number(s.trim() || "0");
  return Number.isInteger(n) && n >= 0 ? n : -1;
};

/** The provider of a create or patch request: these, its password, then senderOf. */
const providerOf = (v: SmtpValues) => ({
  description: v.description,
  host: v.host.trim(),
  port: portOf(v.port),
  tls: v.tls,
  user: v.user,
});

const senderOf = (v: SmtpValues) => ({
  senderAddress: v.senderAddress.trim(),
  senderName: v.senderName,
  replyToAddress: v.replyToAddress.trim(),
});

export function SmtpCreate() {
  const t = useT(messages);
  const qc = useQueryClient();
  const createSmtp = useMutation(S.createSMTPProvider);
  return (
    <ProviderCreate
      kind="smtp"
      title={t("newSmtp")}
      Form={SmtpForm}
      initial={smtpValuesOf(undefined)}
      pending={createSmtp.isPending}
      create={async (v) => {
        const res = await createSmtp.mutateAsync({ provider: { ...providerOf(v), password: v.password, ...senderOf(v) } });
        await qc.invalidateQueries();
        navigate(`/notifications/smtp/${res.details?.id ?? ""}`);
      }}
    />
  );
}

export function SmtpItem({ id }: { id: string }) {
  const got = useQuery(S.getSMTPProvider, { id });
  const patch = useMutation(S.patchSMTPProvider);
  return (
    <ProviderItem
      kind="smtp"
      id={id}
      got={got}
      titleOf={(p) => p.provider?.description || p.provider?.host || id}
      Form={SmtpForm}
      valuesOf={smtpValuesOf}
      pending={patch.isPending}
      save={(v) =>
        patch.mutateAsync({
          id,
          provider: {
            ...providerOf(v),
            ...(v.removePassword ? { password: "" } : v.password ? { password: v.password } : {}),
            ...senderOf(v),
          },
        })
      }
    />
  );
}
