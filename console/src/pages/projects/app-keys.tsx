// An application's keys for private_key_jwt (ListApplicationKeys): when each was added and runs out, and removal.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { ApplicationService, type ApplicationKey } from "../../../../gen/svc/resources/application/v3alpha/application_service_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/projects";
import { Card, type Column, ConfirmButton, DataTable, ErrorText, Status, useDate, useRun } from "../../ui";

export function AppKeys({ id, writable }: { id: string; writable: boolean }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const date = useDate();
  const keys = useQuery(ApplicationService.method.listApplicationKeys, { id });
  const remove = useMutation(ApplicationService.method.removeApplicationKey);
  const run = useRun({ refresh: true });
  const columns: Column<ApplicationKey>[] = [
    { key: "id", label: c("id"), render: (k) => <code>{k.id}</code> },
    { key: "created", label: c("created"), render: (k) => date(k.creationDate) },
    { key: "expires", label: t("keyExpires"), render: (k) => (k.expirationDate ? date(k.expirationDate) : t("keyNeverExpires")) },
  ];
  if (writable) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (k) => (
        <ConfirmButton
          label={c("remove")}
          question={t("confirmRemoveAppKey", { keyId: k.id })}
          onConfirm={() => run.run(() => remove.mutateAsync({ id, keyId: k.id }), t("appKeyRemoved", { keyId: k.id }))}
        />
      ),
    });
  }
  return (
    <Card title={t("keysTitle")}>
      <ErrorText error={run.error ?? (keys.error ? errorOf(keys.error) : undefined)} />
      <DataTable caption={t("keysTitle")} columns={columns} rows={keys.data?.result} rowKey={(k) => k.id} loading={keys.isFetching} />
      <Status text={run.status} />
    </Card>
  );
}
