// The export form: the organisations to include (none: all of the instance's), with or without password hashes and
// TOTP secrets; StartExport returns at once and the job shows in the list below.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { TextFilterMethod } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { OrganizationFieldName } from "../../../../gen/svc/resources/org/v3alpha/org_pb.js";
import { OrganizationService } from "../../../../gen/svc/resources/org/v3alpha/org_service_pb.js";
import { PortabilityService } from "../../../../gen/svc/resources/portability/v3alpha/portability_service_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages } from "../../i18n/portability";
import { Card, CheckField, CheckGroup, ErrorText, FormErrorText, SearchField, Status, useDebounced, useRun } from "../../ui";

/** Organisations listed at once; more are found by name. */
const LISTED = 100;
const FIELDS = ["org_ids", "excluded_org_ids", "with_passwords", "with_otp"];

export function ExportForm() {
  const t = useT(messages);
  const [search, setSearch] = useState("");
  const name = useDebounced(search.trim());
  // the chosen organisations with their names, kept while the search shows others
  const [chosen, setChosen] = useState<Map<string, string>>(new Map());
  const [withPasswords, setWithPasswords] = useState(false);
  const [withOtp, setWithOtp] = useState(false);
  const orgs = useQuery(
    OrganizationService.method.searchOrganizations,
    {
      query: { limit: LISTED, asc: true },
      sortingColumn: OrganizationFieldName.NAME,
      filters: name ? [{ filter: { case: "name", value: { name, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [],
    },
    { placeholderData: keepPreviousData },
  );
  const start = useMutation(PortabilityService.method.startExport);
  const action = useRun({ refresh: true });

  const listed = (orgs.data?.result ?? []).map((o) => ({ value: o.details?.id ?? "", label: o.name }));
  const options = [...listed, ...[...chosen].filter(([id]) => !listed.some((o) => o.value === id)).map(([value, label]) => ({ value, label }))].sort((a, b) =>
    a.label.localeCompare(b.label),
  );
  const total = Number(orgs.data?.details?.totalResult ?? 0);

  return (
    <Card title={t("exportTitle")}>
      {(total > LISTED || name) && (
        <search className="toolbar">
          <SearchField label={t("orgsFilter")} name="filters.name.name" value={search} onChange={setSearch} />
        </search>
      )}
      <ErrorText error={orgs.isError ? errorOf(orgs.error) : undefined} />
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          await action.run(() => start.mutateAsync({ orgIds: [...chosen.keys()], withPasswords, withOtp }), t("exportStarted"));
        }}
      >
        <FormErrorText error={action.error} names={FIELDS} />
        <CheckGroup
          legend={t("orgsLegend")}
          name="org_ids"
          options={options}
          selected={[...chosen.keys()]}
          onChange={(ids) => setChosen(new Map(ids.map((id) => [id, options.find((o) => o.value === id)?.label ?? id])))}
          error={action.error}
          hint={chosen.size ? t("orgsChosen", { n: chosen.size }) : t("orgsAll")}
        />
        {orgs.data && listed.length === 0 && <p className="hint">{t("orgsNone")}</p>}
        {total > listed.length && !name && <p className="hint">{t("orgsShown", { shown: listed.length, total })}</p>}
        {chosen.size > 0 && (
          <div className="buttons field">
            <button type="button" onClick={() => setChosen(new Map())}>
              {t("clearChoice")}
            </button>
          </div>
        )}
        <CheckField label={t("withPasswords")} name="with_passwords" checked={withPasswords} onChange={setWithPasswords} hint={t("withPasswordsHint")} />
        <CheckField label={t("withOtp")} name="with_otp" checked={withOtp} onChange={setWithOtp} hint={t("withOtpHint")} />
        <div className="buttons">
          <button type="submit" className="primary" disabled={action.busy}>
            {t("startExport")}
          </button>
        </div>
        <Status text={action.status} />
      </form>
    </Card>
  );
}
