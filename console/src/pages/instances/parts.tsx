// The domains and the limits (blocking, audit log retention) of an instance.
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { type Instance, InstanceService } from "../../../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/instances";
import { Checkbox, type Column, ConfirmButton, DataTable, ErrorText, Field, fieldErrorOf, Select, Status, useRun } from "../../ui";

const HOUR = 3600;
const DAY = 86400;

export function retentionOf(d: Duration | undefined): { amount: string; unit: "hours" | "days" } {
  if (!d) return { amount: "", unit: "days" };
  const s = Number(d.seconds);
  return s % DAY === 0 ? { amount: String(s / DAY), unit: "days" } : { amount: String(Math.round(s / HOUR)), unit: "hours" };
}

export function InstanceDomains({ instance }: { instance: Instance }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const add = useMutation(InstanceService.method.addInstanceDomain);
  const remove = useMutation(InstanceService.method.removeInstanceDomain);
  const primary = useMutation(InstanceService.method.setPrimaryInstanceDomain);
  const form = useRun({ toError: fieldErrorOf });
  const [domain, setDomain] = useState("");
  const instanceId = instance.details?.id ?? "";
  const canWrite = access.inSystem("system.instance.write");
  const columns: Column<string>[] = [{ key: "domain", label: t("domain"), render: (d) => (d === instance.primaryDomain ? `${d} (${t("primary")})` : d) }];
  if (canWrite) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (d) =>
        // the primary domain cannot go, nor the one this console is served at
        d === instance.primaryDomain ? null : (
          <div className="buttons">
            <button
              type="button"
              onClick={() =>
                form.run(async () => {
                  await primary.mutateAsync({ instanceId, domain: d });
                  await qc.invalidateQueries();
                }, t("primarySet"))
              }
            >
              {t("setPrimary")}
            </button>
            {d !== location.hostname.toLowerCase() && (
              <ConfirmButton
                label={c("remove")}
                question={t("confirmRemoveDomain", { domain: d })}
                onConfirm={() =>
                  form.run(async () => {
                    await remove.mutateAsync({ instanceId, domain: d });
                    await qc.invalidateQueries();
                  }, t("domainRemoved"))
                }
              />
            )}
          </div>
        ),
    });
  }
  return (
    <section className="card">
      <h2>{t("domainsSection")}</h2>
      <p className="hint">{t("primaryNote")}</p>
      <ErrorText error={form.error} fields={canWrite ? ["domain"] : []} />
      <DataTable caption={t("domainsCaption")} columns={columns} rows={instance.domains} rowKey={(d) => d} />
      {canWrite && (
        <form
          className="toolbar"
          noValidate
          onSubmit={async (e) => {
            e.preventDefault();
            const ok = await form.run(async () => {
              await add.mutateAsync({ instanceId, domain: domain.trim() });
              await qc.invalidateQueries();
              return true;
            }, t("domainAdded"));
            if (ok) setDomain("");
          }}
        >
          <Field
            label={t("newDomain")}
            name="domain"
            value={domain}
            onChange={(e) => setDomain(e.target.value)}
            error={form.error}
            autoCapitalize="none"
            spellCheck={false}
          />
          <div className="field">
            <button type="submit" disabled={add.isPending}>
              {t("addDomain")}
            </button>
          </div>
        </form>
      )}
      <Status text={form.status} />
    </section>
  );
}

export function InstanceLimits({ instance }: { instance: Instance }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const limit = useMutation(InstanceService.method.limit);
  const form = useRun({ toError: fieldErrorOf });
  const initial = retentionOf(instance.auditLogRetention);
  const [block, setBlock] = useState(instance.blocked);
  const [amount, setAmount] = useState(initial.amount);
  const [unit, setUnit] = useState<"hours" | "days">(initial.unit);
  if (!access.inSystem("system.instance.write")) return null;
  return (
    <section className="card">
      <h2>{t("limits")}</h2>
      <p className="hint">{t("limitsIntro")}</p>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          await form.run(async () => {
            const n = amount.trim() === "" ? undefined : Number(amount);
            const retention =
              n === undefined
                ? instance.auditLogRetention
                  ? { resetAuditLogRetention: true }
                  : {}
                : { auditLogRetention: create(DurationSchema, { seconds: BigInt(Math.round((Number.isFinite(n) ? n : 0) * (unit === "days" ? DAY : HOUR))) }) };
            await limit.mutateAsync({ instanceId: instance.details?.id ?? "", limits: { block, ...retention } });
            await qc.invalidateQueries();
          }, c("saved"));
        }}
      >
        <ErrorText error={form.error} fields={["limits.audit_log_retention"]} />
        <Checkbox label={t("block")} name="limits.block" checked={block} onChange={setBlock} />
        <div className="toolbar">
          <Field
            label={t("retention")}
            name="limits.audit_log_retention"
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
            error={form.error}
            hint={t("retentionHint")}
          />
          <Select
            label={t("unit")}
            name="limits.audit_log_retention.unit"
            value={unit}
            onChange={(v) => setUnit(v as "hours" | "days")}
            options={[
              { value: "hours", label: t("hours") },
              { value: "days", label: t("days") },
            ]}
          />
        </div>
        <button type="submit" className="primary" disabled={limit.isPending}>
          {c("save")}
        </button>
        <Status text={form.status} />
      </form>
    </section>
  );
}
