// The skeleton of an SMTP or SMS provider's screens: its form (the description, then the kind's own fields), the page
// of a new one and the page of one to change; sms.tsx and smtp.tsx give the fields and the requests.
import { useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import type { State } from "../../../../gen/svc/resources/object/v3alpha/object_pb.js";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/notifications";
import { EditForm, Field, type FormError, Missing, useRun } from "../../ui";
import { ProviderLists } from "./list";
import { ProviderPage, usePerms } from "./shared";

type Kind = "smtp" | "sms";

/** The props of a kind's form (SmtpForm, SmsForm). */
export interface ProviderFormProps<V> {
  initial: V;
  editing: boolean;
  disabled: boolean;
  submitLabel: string;
  pending: boolean;
  error: FormError;
  onSubmit: (v: V) => void;
}

export type SetValue<V> = <K extends keyof V>(k: K, value: V[K]) => void;

/** A provider's form: its description, then the fields `body` gives for the values so far. */
export function ProviderForm<V extends { description: string }>({
  fields,
  body,
  initial,
  disabled,
  submitLabel,
  pending,
  error,
  onSubmit,
}: ProviderFormProps<V> & { fields: string[]; body: (v: V, set: SetValue<V>) => ReactNode }) {
  const t = useT(messages);
  const [v, setV] = useState(initial);
  const set: SetValue<V> = (k, value) => setV((o) => ({ ...o, [k]: value }));
  return (
    <EditForm fields={fields} error={error} disabled={disabled} submitLabel={submitLabel} pending={pending} onSubmit={() => onSubmit(v)}>
      <Field
        label={t("description")}
        name="provider.description"
        value={v.description}
        onChange={(e) => set("description", e.target.value)}
        error={error}
        hint={t("descriptionHint")}
      />
      {body(v, set)}
    </EditForm>
  );
}

/** The page of a new provider (the lists for a user who may not create one); `create` sends it and goes on. */
export function ProviderCreate<V>({
  kind,
  title,
  Form,
  initial,
  pending,
  create,
  after,
}: {
  kind: Kind;
  title: string;
  Form: (p: ProviderFormProps<V>) => ReactNode;
  initial: V;
  pending: boolean;
  create: (v: V) => Promise<unknown>;
  after?: ReactNode;
}) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const form = useRun();
  if (!perms.write) return <ProviderLists />;
  return (
    <ProviderPage kind={kind} title={title} status={form.status} after={after}>
      <Form
        initial={initial}
        editing={false}
        disabled={false}
        submitLabel={c("create")}
        pending={pending}
        error={form.error}
        onSubmit={(v) => form.run(() => create(v), t("created"))}
      />
    </ProviderPage>
  );
}

/** What a provider's page needs of its Get* query. */
interface Got<P> {
  isPending: boolean;
  error: unknown;
  data?: { provider?: P };
}

/** The page of one provider: its form filled in, saved by `save` (then every query is read anew). */
export function ProviderItem<V, P extends { state: State; details?: { sequence: bigint } }>({
  kind,
  id,
  got,
  titleOf,
  Form,
  valuesOf,
  pending,
  save,
  after,
}: {
  kind: Kind;
  id: string;
  got: Got<P>;
  titleOf: (p: P) => string;
  Form: (p: ProviderFormProps<V>) => ReactNode;
  valuesOf: (p: P) => V;
  pending: boolean;
  save: (v: V) => Promise<unknown>;
  after?: ReactNode;
}) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const perms = usePerms();
  const qc = useQueryClient();
  const form = useRun();
  const p = got.data?.provider;
  if (got.isPending) return <p role="status">{c("loading")}</p>;
  if (!p) return <Missing title={t("title")} error={got.error} back="/notifications" />;
  const title = titleOf(p);
  return (
    <ProviderPage kind={kind} title={title} item={{ id, state: p.state }} status={form.status} after={after}>
      <Form
        key={String(p.details?.sequence ?? "")}
        initial={valuesOf(p)}
        editing
        disabled={!perms.write}
        submitLabel={c("save")}
        pending={pending}
        error={form.error}
        onSubmit={(v) =>
          form.run(async () => {
            await save(v);
            await qc.invalidateQueries();
          }, c("saved"))
        }
      />
    </ProviderPage>
  );
}
