// The SMTP and SMS providers of the instance: one searchable, sortable list of each kind.
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { type GetSMSProvider, type GetSMTPProvider, ProviderFieldName } from "../../../../gen/svc/resources/notification/v3alpha/provider_pb.js";
import { NotificationProviderService } from "../../../../gen/svc/resources/notification/v3alpha/provider_service_pb.js";
import { State, TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/notifications";
import { navigate } from "../../router";
import { type Column, Link, Page, QueryTable, SearchField, StateSelect, useDate, useListState } from "../../ui";
import { stateText, usePerms } from "./shared";

const S = NotificationProviderService.method;

export function ProviderLists() {
  const t = useT(messages);
  return (
    <Page title={t("title")}>
      <p>{t("intro")}</p>
      <ProviderList kind="smtp" />
      <ProviderList kind="sms" />
    </Page>
  );
}

const sortColumns: Record<string, ProviderFieldName> = {
  description: ProviderFieldName.DESCRIPTION,
  changed: ProviderFieldName.CHANGE_DATE,
  id: ProviderFieldName.ID,
};

type Row = GetSMTPProvider | GetSMSProvider;

function ProviderList({ kind }: { kind: "smtp" | "sms" }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const date = useDate();
  const perms = usePerms();
  const [text, setText] = useState("");
  const [state, setState] = useState("");
  const list = useListState();
  const filters = [
    ...(text.trim() ? [{ filter: { case: "description" as const, value: { description: text.trim(), method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : []),
    ...(state
      ? [{ filter: { case: "state" as const, value: { state: state === "active" ? State.EFFECTIVE_STATE_ACTIVE : State.EFFECTIVE_STATE_INACTIVE } } }]
      : []),
  ];
  const request = {
    query: list.query,
    sortingColumn: sortColumns[list.sort.column] ?? ProviderFieldName.UNSPECIFIED,
    filters,
  };
  const smtp = useQuery(S.searchSMTPProviders, request, { enabled: kind === "smtp" });
  const sms = useQuery(S.searchSMSProviders, request, { enabled: kind === "sms" });
  const found = kind === "smtp" ? smtp : sms;
  const columns: Column<Row>[] = [
    {
      key: "description",
      label: t("description"),
      sort: "description",
      render: (r) => <Link to={`/notifications/${kind}/${r.details?.id ?? ""}`}>{r.provider?.description || t("noDescription")}</Link>,
    },
    kind === "smtp"
      ? { key: "host", label: t("host"), render: (r) => (r as GetSMTPProvider).provider?.host }
      : {
          key: "type",
          label: t("type"),
          render: (r) => ((r as GetSMSProvider).provider?.providerType.case === "twilio" ? t("typeTwilio") : t("typeHttp")),
        },
    kind === "smtp"
      ? { key: "sender", label: t("sender"), render: (r) => (r as GetSMTPProvider).provider?.senderAddress }
      : {
          key: "target",
          label: t("url"),
          render: (r) => {
            const p = (r as GetSMSProvider).provider?.providerType;
            return p?.case === "http" ? p.value.url : p?.case === "twilio" ? p.value.baseUrl || "https://api.twilio.com" : "";
          },
        },
    { key: "state", label: c("state"), render: (r) => stateText(c, r.state) },
    { key: "id", label: c("id"), sort: "id", render: (r) => r.details?.id },
    {
      key: "changed",
      label: c("changed"),
      sort: "changed",
      render: (r) => date(r.details?.changeDate),
    },
  ];
  return (
    <section className="card">
      <h2>{kind === "smtp" ? t("smtpSection") : t("smsSection")}</h2>
      <search className="toolbar">
        <SearchField label={t("searchDescription")} name="filters.description" value={text} onChange={list.reset(setText)} />
        <StateSelect label={t("stateFilter")} name="filters.state" all={t("stateAll")} value={state} onChange={list.reset(setState)} />
        {perms.write && (
          <div className="field">
            <button type="button" className="primary" onClick={() => navigate(`/notifications/${kind}/new`)}>
              {kind === "smtp" ? t("addSmtp") : t("addSms")}
            </button>
          </div>
        )}
      </search>
      <QueryTable<Row>
        list={found}
        caption={kind === "smtp" ? t("smtpCaption") : t("smsCaption")}
        columns={columns}
        rowKey={(r) => r.details?.id ?? ""}
        sort={list.sort}
        onSort={list.onSort}
        paging={list.paging}
      />
    </section>
  );
}
