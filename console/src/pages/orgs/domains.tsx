// The domains of an organisation: list (search, verified only, order, paging), add, remove, set as primary, and
// validation: a token to publish (HTTP file or DNS TXT record), then a check of it.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import {
  DomainValidationType,
  type GenerateValidationResponse,
  type OrganizationDomain,
  OrganizationDomainService,
} from "../../../../gen/svc/resources/org/v3alpha/org_domain_service_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/orgs";
import {
  Card,
  Checkbox,
  type Column,
  ConfirmButton,
  ErrorText,
  Field,
  FormErrorText,
  Modal,
  OrderSelect,
  QueryTable,
  SearchField,
  Select,
  Status,
  SubmitForm,
  useDebounced,
  useListState,
  useRun,
} from "../../ui";

export function Domains({ orgId, canWrite }: { orgId: string; canWrite: boolean }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const [search, setSearch] = useState("");
  const text = useDebounced(search.trim());
  const [verifiedOnly, setVerifiedOnly] = useState(false);
  const paged = useListState({ column: "", asc: true });
  const asc = paged.sort.asc;
  const [validating, setValidating] = useState<string>();
  const list = useQuery(
    OrganizationDomainService.method.searchOrganizationDomains,
    { organizationId: orgId, query: paged.query, domainContains: text, verifiedOnly },
    { placeholderData: keepPreviousData },
  );
  const remove = useMutation(OrganizationDomainService.method.removeOrganizationDomain);
  const primary = useMutation(OrganizationDomainService.method.setAsPrimary);
  const action = useRun({ refresh: true });

  const kind = (d: OrganizationDomain) =>
    [d.isPrimary && t("primary"), d.isGenerated && t("generated"), d.isVerified ? t("verified") : t("unverified")].filter(Boolean).join(", ");

  const columns: Column<OrganizationDomain>[] = [
    { key: "domain", label: t("domain"), render: (d) => d.domain },
    { key: "state", label: c("state"), render: kind },
  ];
  if (canWrite) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (d) => (
        <div className="buttons">
          {d.isVerified && !d.isPrimary && (
            <button
              type="button"
              onClick={() => action.run(() => primary.mutateAsync({ organizationId: orgId, domain: d.domain }), t("primarySet", { domain: d.domain }))}
            >
              {t("setPrimary")}
              <span className="visually-hidden"> ({d.domain})</span>
            </button>
          )}
          {!d.isVerified && (
            <button type="button" onClick={() => setValidating(d.domain)}>
              {t("validate")}
              <span className="visually-hidden"> ({d.domain})</span>
            </button>
          )}
          {!d.isPrimary && !d.isGenerated && (
            <ConfirmButton
              label={`${c("remove")} ${d.domain}`}
              question={t("confirmRemoveDomain", { domain: d.domain })}
              onConfirm={() => action.run(() => remove.mutateAsync({ organizationId: orgId, domain: d.domain }), t("domainRemoved", { domain: d.domain }))}
            />
          )}
        </div>
      ),
    });
  }
  const current = list.data?.result.find((d) => d.domain === validating);

  return (
    <Card title={t("domainsTitle")}>
      <search className="toolbar">
        <SearchField label={t("searchDomain")} name="domain_contains" value={search} onChange={paged.reset(setSearch)} />
        <OrderSelect label={t("order")} oldest={t("oldestFirst")} newest={t("newestFirst")} asc={asc} onChange={(a) => paged.onSort("", a)} />
        <Checkbox label={t("verifiedOnly")} name="verified_only" checked={verifiedOnly} onChange={paged.reset(setVerifiedOnly)} />
      </search>
      <QueryTable list={list} error={action.error} caption={t("domainsCaption")} columns={columns} rowKey={(d) => d.domain} paging={paged.paging} />
      <Status text={action.status} />
      {canWrite && <AddDomain orgId={orgId} onAdded={(domain, verified) => (verified ? undefined : setValidating(domain))} />}
      <Modal title={t("validateTitle", { domain: validating ?? "" })} open={validating !== undefined} onClose={() => setValidating(undefined)}>
        {validating !== undefined && (
          <Validate orgId={orgId} domain={validating} generatedBefore={!!current?.validationType} onClose={() => setValidating(undefined)} />
        )}
      </Modal>
    </Card>
  );
}

function AddDomain({ orgId, onAdded }: { orgId: string; onAdded: (domain: string, verified: boolean) => void }) {
  const t = useT(messages);
  const [domain, setDomain] = useState("");
  const add = useMutation(OrganizationDomainService.method.addOrganizationDomain);
  const action = useRun({ refresh: true });
  return (
    <SubmitForm
      head={<h3>{t("addDomain")}</h3>}
      error={action.error}
      names={["domain"]}
      busy={action.busy}
      submitLabel={t("addDomain")}
      status={action.status}
      onSubmit={async () => {
        const r = await action.run(() => add.mutateAsync({ organizationId: orgId, domain }));
        if (r) {
          const added = r.details?.id || domain.trim().toLowerCase();
          action.setStatus(r.isVerified ? t("domainAddedVerified", { domain: added }) : t("domainAddedUnverified", { domain: added }));
          setDomain("");
          onAdded(added, r.isVerified);
        }
      }}
    >
      <Field label={t("domain")} name="domain" value={domain} onChange={(e) => setDomain(e.target.value)} error={action.error} hint={t("domainHint")} />
    </SubmitForm>
  );
}

/** Generates a token to publish, shows where, and checks it. */
function Validate({ orgId, domain, generatedBefore, onClose }: { orgId: string; domain: string; generatedBefore: boolean; onClose: () => void }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const [type, setType] = useState(String(DomainValidationType.DNS));
  const [token, setToken] = useState<GenerateValidationResponse>();
  const [verified, setVerified] = useState(false);
  const generate = useMutation(OrganizationDomainService.method.generateValidation);
  const validate = useMutation(OrganizationDomainService.method.validate);
  const gen = useRun({ refresh: true });
  const check = useRun({ refresh: true });
  const [copied, setCopied] = useState(false);
  return (
    <>
      <p>{t("validateIntro")}</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setCopied(false);
          const r = await gen.run(() => generate.mutateAsync({ organizationId: orgId, domain, type: Number(type) }));
          if (r) setToken(r);
        }}
      >
        <FormErrorText error={gen.error} names={["type"]} />
        <Select
          label={t("validationType")}
          name="type"
          value={type}
          onChange={setType}
          error={gen.error}
          options={[
            { value: String(DomainValidationType.DNS), label: t("typeDns") },
            { value: String(DomainValidationType.HTTP), label: t("typeHttp") },
          ]}
        />
        <div className="buttons">
          <button type="submit" disabled={gen.busy || verified}>
            {token ? t("newToken") : t("generateToken")}
          </button>
        </div>
      </form>
      {token && (
        <div>
          <p>{token.dnsName ? t("placeDns", { name: token.dnsName }) : t("placeHttp", { url: token.url })}</p>
          <dl className="props">
            {token.dnsName ? (
              <>
                <dt>{t("recordName")}</dt>
                <dd>
                  <code>{token.dnsName}</code>
                </dd>
                <dt>{t("recordType")}</dt>
                <dd>
                  <code>TXT</code>
                </dd>
              </>
            ) : (
              <>
                <dt>{t("fileUrl")}</dt>
                <dd>
                  <code>{token.url}</code>
                </dd>
              </>
            )}
            <dt>{token.dnsName ? t("recordValue") : t("fileContent")}</dt>
            <dd>
              <output className="secret" data-testid="validation-token">
                {token.token}
              </output>
            </dd>
          </dl>
          <div className="buttons">
            <button
              type="button"
              onClick={async () => {
                await navigator.clipboard?.writeText(token.token).catch(() => {});
                setCopied(true);
              }}
            >
              {t("copyToken")}
            </button>
          </div>
          <p role="status">{copied ? c("copied") : ""}</p>
        </div>
      )}
      {(token || generatedBefore) && (
        <>
          <p className="hint">{t("validateWhenPlaced")}</p>
          <ErrorText error={check.error} />
          <div className="buttons">
            <button
              type="button"
              className="primary"
              disabled={check.busy || verified}
              onClick={async () => {
                const r = await check.run(() => validate.mutateAsync({ organizationId: orgId, domain }), t("validated", { domain }));
                if (r) setVerified(true);
              }}
            >
              {t("validateNow")}
            </button>
          </div>
        </>
      )}
      <Status text={check.status} />
      <div className="buttons">
        <button type="button" onClick={onClose}>
          {c("close")}
        </button>
      </div>
    </>
  );
}
