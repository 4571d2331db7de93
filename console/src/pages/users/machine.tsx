// The sections only a machine has: its client secret, and its keys and personal access tokens (each secret is
// returned once and shown in a SecretModal).
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { type MachineCredential, UserService } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";
import { type Column, ConfirmButton, DataTable, ErrorText, Field, SecretModal, Status, useDate, useRun } from "../../ui";
import { useCanIn, useChange } from "./common";
import type { SectionProps } from "./detail";

export function SecretSection({ user, orgId }: SectionProps) {
  const t = useT(messages);
  const can = useCanIn(orgId);
  const id = user.details?.id ?? "";
  const has = user.type.case === "machine" && user.type.value.hasSecret;
  const form = useRun();
  const generate = useChange(UserService.method.generateClientSecret);
  const remove = useChange(UserService.method.removeClientSecret);
  const [secret, setSecret] = useState<{ clientId: string; value: string }>();
  const writable = can("user.write");
  const make = async () => {
    const r = await form.run(() => generate.mutateAsync({ id }), t("secretGenerated"));
    if (r) setSecret({ clientId: r.clientId, value: r.clientSecret });
  };
  return (
    <section className="card">
      <h2>{t("clientSecret")}</h2>
      <p>{has ? t("hasSecret") : t("noSecret")}</p>
      <p className="hint">{t("clientSecretHint", { username: user.username })}</p>
      <ErrorText error={form.error} />
      {writable && (
        <div className="buttons">
          {has ? (
            <ConfirmButton label={t("regenerateSecret")} question={t("confirmRegenerateSecret")} onConfirm={make} />
          ) : (
            <button type="button" className="primary" disabled={form.busy} onClick={make}>
              {t("generateSecret")}
            </button>
          )}
          {has && (
            <ConfirmButton
              label={t("removeSecret")}
              question={t("confirmRemoveSecret")}
              onConfirm={() => form.run(() => remove.mutateAsync({ id }), t("removedDone"))}
            />
          )}
        </div>
      )}
      <Status text={form.status} />
      <SecretModal title={t("secretFor", { clientId: secret?.clientId ?? "" })} value={secret?.value} onClose={() => setSecret(undefined)} />
    </section>
  );
}

/** The end of the day a date input names, in the browser's time zone; "" gives none. */
function expiryOf(day: string) {
  return day ? timestampFromDate(new Date(`${day}T23:59:59`)) : undefined;
}

export function CredentialsSection({ user, orgId }: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(orgId);
  const date = useDate();
  const id = user.details?.id ?? "";
  const list = useQuery(UserService.method.listMachineCredentials, { id });
  // one status line for the section; a date's error shows at the form that was sent
  const form = useRun();
  const [sent, setSent] = useState<"pat" | "key">();
  const addPat = useChange(UserService.method.addPersonalAccessToken);
  const removePat = useChange(UserService.method.removePersonalAccessToken);
  const addKey = useChange(UserService.method.addMachineKey);
  const removeKey = useChange(UserService.method.removeMachineKey);
  const [patExpiry, setPatExpiry] = useState("");
  const [keyExpiry, setKeyExpiry] = useState("");
  const [shown, setShown] = useState<{ title: string; value: string }>();
  const writable = can("user.write");

  const columns: Column<MachineCredential>[] = [
    { key: "kind", label: t("kind"), render: (k) => (k.kind === "pat" ? t("pat") : k.kind === "key" ? t("machineKey") : k.kind) },
    { key: "id", label: c("id"), render: (k) => k.id },
    { key: "created", label: c("created"), render: (k) => date(k.creationDate) },
    { key: "expires", label: t("expires"), render: (k) => (k.expirationDate ? date(k.expirationDate) : t("never")) },
  ];
  if (writable) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (k) => (
        <ConfirmButton
          label={c("remove")}
          question={k.kind === "pat" ? t("confirmRemovePat", { id: k.id }) : t("confirmRemoveMachineKey", { id: k.id })}
          onConfirm={() =>
            form.run(
              (): Promise<unknown> => (k.kind === "pat" ? removePat.mutateAsync({ id, tokenId: k.id }) : removeKey.mutateAsync({ id, keyId: k.id })),
              t("removedDone"),
            )
          }
        />
      ),
    });
  }

  return (
    <section className="card">
      <h2>{t("credentials")}</h2>
      <ErrorText error={form.error ?? (list.error ? errorOf(list.error) : undefined)} fields={["expiration_date"]} />
      <DataTable caption={t("credentialsCaption")} columns={columns} rows={list.data?.result} rowKey={(k) => `${k.kind}:${k.id}`} loading={list.isFetching} />
      {writable && (
        <>
          <h3>{t("newPat")}</h3>
          <form
            className="toolbar"
            onSubmit={async (e) => {
              e.preventDefault();
              const exp = expiryOf(patExpiry);
              setSent("pat");
              const r = await form.run(() => addPat.mutateAsync({ id, ...(exp ? { expirationDate: exp } : {}) }), t("patAdded"));
              if (r) {
                setShown({ title: t("patTitle"), value: r.token });
                setPatExpiry("");
              }
            }}
          >
            <Field
              label={t("patExpires")}
              name="expiration_date"
              type="date"
              value={patExpiry}
              onChange={(e) => setPatExpiry(e.target.value)}
              error={sent === "pat" ? form.error : undefined}
            />
            <div className="field">
              <button type="submit" className="primary" disabled={form.busy}>
                {t("addPat")}
              </button>
            </div>
          </form>
          <h3>{t("newMachineKey")}</h3>
          <form
            className="toolbar"
            onSubmit={async (e) => {
              e.preventDefault();
              const exp = expiryOf(keyExpiry);
              setSent("key");
              const r = await form.run(() => addKey.mutateAsync({ id, ...(exp ? { expirationDate: exp } : {}) }), t("machineKeyAdded"));
              if (r) {
                setShown({ title: t("machineKeyTitle"), value: r.keyContent });
                setKeyExpiry("");
              }
            }}
          >
            <Field
              label={t("keyExpires")}
              name="expiration_date"
              type="date"
              value={keyExpiry}
              onChange={(e) => setKeyExpiry(e.target.value)}
              error={sent === "key" ? form.error : undefined}
            />
            <div className="field">
              <button type="submit" className="primary" disabled={form.busy}>
                {t("addMachineKey")}
              </button>
            </div>
          </form>
        </>
      )}
      <Status text={form.status} />
      <SecretModal title={shown?.title} value={shown?.value} onClose={() => setShown(undefined)} />
    </section>
  );
}
