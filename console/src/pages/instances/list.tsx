// The instances of the system: search by domain or ID, newest or oldest first.
import { create } from "@bufbuild/protobuf";
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { type Instance, InstanceService } from "../../../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { InIDsFilterSchema } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/instances";
import { navigate } from "../../router";
import { type Column, Field, Link, OrderSelect, Page, QueryTable, Select, useDate, useListState } from "../../ui";

/** The instance this console is served by. */
export const isOwnInstance = (i: Instance) => i.domains.includes(location.hostname.toLowerCase());

export function InstanceList() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const date = useDate();
  const access = useAccess();
  const [by, setBy] = useState<"domain" | "id">("domain");
  const [text, setText] = useState("");
  const list = useListState();
  const needle = text.trim();
  const filter =
    by === "domain"
      ? ({ case: "domain", value: needle.toLowerCase() } as const)
      : ({ case: "inIds", value: create(InIDsFilterSchema, { ids: [needle] }) } as const);
  const found = useQuery(InstanceService.method.searchInstances, {
    query: list.query,
    filters: needle ? [{ filter }] : [],
  });
  const columns: Column<Instance>[] = [
    {
      key: "name",
      label: c("name"),
      render: (i) => <Link to={`/instances/${i.details?.id ?? ""}`}>{i.name || i.details?.id}</Link>,
    },
    { key: "id", label: c("id"), render: (i) => i.details?.id },
    {
      key: "domains",
      label: t("domains"),
      render: (i) => i.domains.map((d) => (d === i.primaryDomain ? `${d} (${t("primary")})` : d)).join(", "),
    },
    {
      key: "state",
      label: c("state"),
      render: (i) => (
        <>
          {i.blocked ? t("blocked") : t("serving")}
          {isOwnInstance(i) ? ` (${t("thisInstance")})` : ""}
        </>
      ),
    },
    { key: "changed", label: c("changed"), render: (i) => date(i.details?.changeDate) },
  ];
  return (
    <Page
      title={t("title")}
      actions={
        access.inSystem("system.instance.write") && (
          <button type="button" className="primary" onClick={() => navigate("/instances/new")}>
            {t("createInstance")}
          </button>
        )
      }
    >
      <p>{t("intro")}</p>
      <search className="toolbar">
        <Select
          label={t("searchBy")}
          name="filters.by"
          value={by}
          onChange={list.reset((v: string) => setBy(v as "domain" | "id"))}
          options={[
            { value: "domain", label: t("byDomain") },
            { value: "id", label: t("byId") },
          ]}
        />
        <Field
          label={c("search")}
          name={by === "domain" ? "filters.domain" : "filters.in_ids.ids"}
          type="search"
          value={text}
          onChange={(e) => list.reset(setText)(e.target.value)}
        />
        <OrderSelect
          label={t("order")}
          oldest={t("oldestFirst")}
          newest={t("newestFirst")}
          asc={list.sort.asc}
          onChange={(a) => list.onSort("", a)}
          newestFirst
        />
      </search>
      <QueryTable list={found} caption={t("caption")} columns={columns} rowKey={(i) => i.details?.id ?? ""} paging={list.paging} />
    </Page>
  );
}
