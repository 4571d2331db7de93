// An SMS provider (HTTP or Twilio): its form, creating one (an HTTP one returns its signing key once) and changing one.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { GetSMSProvider } from "../../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { NotificationProviderService } from "../../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/notifications";
import { navigate } from "../../router";
import { EditForm, Field, type FormError, Missing, SecretModal, Select, useRun } from "../../ui";
import { ProviderLists } from "./list";
import { ProviderPage, usePerms } from "./shared";

const S = NotificationProviderService.method;

interface SmsValues {
  description: string;
  type: "http" | "twilio";
  url: string;
  sid: string;
  token: string;
  senderNumber: string;
  baseUrl: string;
}

const SMS_FIELDS = [
  "provider.description",
  "provider.provider_type",
  "provider.http.url",
  "provider.twilio.sid",
  "provider.twilio.token",
  "provider.twilio.sender_number",
  "provider.twilio.base_url",
];

function smsValuesOf(p: GetSMSProvider | undefined): SmsValues {
  const pt = p?.provider?.providerType;
  return {
    description: p?.provider?.description ?? "",
    type: pt?.case === "twilio" ? "twilio" : "http",
    url: pt?.case === "http" ? pt.value.url : "",
    sid: pt?.case === "twilio" ? pt.value.sid : "",
    token: "",
    senderNumber: pt?.case === "twilio" ? pt.value.senderNumber : "",
    baseUrl: pt?.case === "twilio" ? pt.value.baseUrl : "",
  };
}

function smsTypeOf(v: SmsValues) {
  return v.type === "http"
    ? { case: "http" as const, value: { url: v.url.trim() } }
    : { case: "twilio" as const, value: { sid: v.sid.trim(), token: v.token, senderNumber: v.senderNumber.trim(), baseUrl: v.baseUrl.trim() } };
}

export function SmsForm({
  initial,
  editing,
  disabled,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial: SmsValues;
  editing: boolean;
  disabled: boolean;
  submitLabel: string;
  pending: boolean;
  error: FormError;
  onSubmit: (v: SmsValues) => void;
}) {
  const t = useT(messages);
  const [v, setV] = useState(initial);
  const set = <K extends keyof SmsValues>(k: K, value: SmsValues[K]) => setV((o) => ({ ...o, [k]: value }));
  return (
    <EditForm fields={SMS_FIELDS} error={error} disabled={disabled} submitLabel={submitLabel} pending={pending} onSubmit={() => onSubmit(v)}>
      <Field
        label={t("description")}
        name="provider.description"
        value={v.description}
        onChange={(e) => set("description", e.target.value)}
        error={error}
        hint={t("descriptionHint")}
      />
      <Select
        label={t("type")}
        name="provider.provider_type"
        value={v.type}
        onChange={(x) => set("type", x as "http" | "twilio")}
        options={[
          { value: "http", label: t("typeHttp") },
          { value: "twilio", label: t("typeTwilio") },
        ]}
        error={error}
      />
      {v.type === "http" ? (
        <Field
          label={t("url")}
          name="provider.http.url"
          type="url"
          value={v.url}
          onChange={(e) => set("url", e.target.value)}
          error={error}
          hint={t("urlHint")}
          required
        />
      ) : (
        <>
          <Field
            label={t("sid")}
            name="provider.twilio.sid"
            value={v.sid}
            onChange={(e) => set("sid", e.target.value)}
            error={error}
            required
            autoComplete="off"
          />
          <Field
            label={t("token")}
            name="provider.twilio.token"
            type="password"
            autoComplete="new-password"
            value={v.token}
            onChange={(e) => set("token", e.target.value)}
            error={error}
            hint={editing && initial.type === "twilio" ? t("tokenKeepHint") : t("passwordHint")}
          />
          <Field
            label={t("senderNumber")}
            name="provider.twilio.sender_number"
            value={v.senderNumber}
            onChange={(e) => set("senderNumber", e.target.value)}
            error={error}
            required
          />
          <Field
            label={t("baseUrl")}
            name="provider.twilio.base_url"
            type="url"
            value={v.baseUrl}
            onChange={(e) => set("baseUrl", e.target.value)}
            error={error}
            hint={t("baseUrlHint")}
          />
        </>
      )}
    </EditForm>
  );
}

export function SmsCreate() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const createSms = useMutation(S.createSMSProvider);
  const form = useRun();
  const [key, setKey] = useState<{ id: string; key: string }>();
  if (!perms.write) return <ProviderLists />;
  return (
    <ProviderPage
      kind="sms"
      title={t("newSms")}
      status={form.status}
      after={
        <SecretModal
          title={t("signingKeyTitle")}
          value={key?.key}
          onClose={() => {
            const id = key?.id ?? "";
            setKey(undefined);
            navigate(`/notifications/sms/${id}`);
          }}
        />
      }
    >
      <SmsForm
        initial={smsValuesOf(undefined)}
        editing={false}
        disabled={false}
        submitLabel={c("create")}
        pending={createSms.isPending}
        error={form.error}
        onSubmit={(v) =>
          form.run(async () => {
            const res = await createSms.mutateAsync({ provider: { description: v.description, providerType: smsTypeOf(v) } });
            await qc.invalidateQueries();
            const id = res.details?.id ?? "";
            if (res.signingKey) setKey({ id, key: res.signingKey });
            else navigate(`/notifications/sms/${id}`);
          }, t("created"))
        }
      />
    </ProviderPage>
  );
}

export function SmsItem({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const got = useQuery(S.getSMSProvider, { id });
  const patch = useMutation(S.patchSMSProvider);
  const form = useRun();
  const [key, setKey] = useState<string>();
  const p = got.data?.provider;
  if (got.isPending) return <p role="status">{c("loading")}</p>;
  if (!p) return <Missing title={t("title")} error={got.error} back="/notifications" />;
  const title = p.provider?.description || id;
  return (
    <ProviderPage
      kind="sms"
      title={title}
      item={{ id, state: p.state }}
      status={form.status}
      after={<SecretModal title={t("signingKeyTitle")} value={key} onClose={() => setKey(undefined)} />}
    >
      <SmsForm
        key={String(p.details?.sequence ?? "")}
        initial={smsValuesOf(p)}
        editing
        disabled={!perms.write}
        submitLabel={c("save")}
        pending={patch.isPending}
        error={form.error}
        onSubmit={(v) =>
          form.run(async () => {
            const res = await patch.mutateAsync({ id, provider: { description: v.description, providerType: smsTypeOf(v) } });
            if (res.signingKey) setKey(res.signingKey);
            await qc.invalidateQueries();
          }, c("saved"))
        }
      />
    </ProviderPage>
  );
}
