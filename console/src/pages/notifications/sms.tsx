// An SMS provider (HTTP or Twilio): its form, creating one (an HTTP one returns its signing key once) and changing one.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { GetSMSProvider } from "../../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { NotificationProviderService } from "../../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { useT } from "../../i18n";
import { messages } from "../../i18n/notifications";
import { navigate } from "../../router";
import { Field, SecretModal, Select } from "../../ui";
import { ProviderCreate, ProviderForm, type ProviderFormProps, ProviderItem } from "./provider-form";

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

export function SmsForm(props: ProviderFormProps<SmsValues>) {
  const t = useT(messages);
  const { initial, editing, error } = props;
  return (
    <ProviderForm
      {...props}
      fields={SMS_FIELDS}
      body={(v, set) => (
        <>
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
        </>
      )}
    />
  );
}

export function SmsCreate() {
  const t = useT(messages);
  const qc = useQueryClient();
  const createSms = useMutation(S.createSMSProvider);
  const [key, setKey] = useState<{ id: string; key: string }>();
  return (
    <ProviderCreate
      kind="sms"
      title={t("newSms")}
      Form={SmsForm}
      initial={smsValuesOf(undefined)}
      pending={createSms.isPending}
      create={async (v) => {
        const res = await createSms.mutateAsync({ provider: { description: v.description, providerType: smsTypeOf(v) } });
        await qc.invalidateQueries();
        const id = res.details?.id ?? "";
        if (res.signingKey) setKey({ id, key: res.signingKey });
        else navigate(`/notifications/sms/${id}`);
      }}
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
    />
  );
}

export function SmsItem({ id }: { id: string }) {
  const t = useT(messages);
  const got = useQuery(S.getSMSProvider, { id });
  const patch = useMutation(S.patchSMSProvider);
  const [key, setKey] = useState<string>();
  return (
    <ProviderItem
      kind="sms"
      id={id}
      got={got}
      titleOf={(p) => p.provider?.description || id}
      Form={SmsForm}
      valuesOf={smsValuesOf}
      pending={patch.isPending}
      save={async (v) => {
        const res = await patch.mutateAsync({ id, provider: { description: v.description, providerType: smsTypeOf(v) } });
        if (res.signingKey) setKey(res.signingKey);
      }}
      after={<SecretModal title={t("signingKeyTitle")} value={key} onClose={() => setKey(undefined)} />}
    />
  );
}
