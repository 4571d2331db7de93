// A new instance with its first organisation and administrator (a human, or a machine whose token is shown once).
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { InstanceService } from "../../../../gen/svc/resources/instance/v3alpha/instance_service_pb.js";
import { useAccess } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/instances";
import { navigate } from "../../router";
import { BackLink, Checkbox, ErrorText, Field, fieldErrorOf, Page, SecretModal, Select, Status, useRun } from "../../ui";
import { InstanceList } from "./list";

export function CreateInstance() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const qc = useQueryClient();
  const createInstance = useMutation(InstanceService.method.createInstance);
  const form = useRun({ toError: fieldErrorOf });
  const [name, setName] = useState("");
  const [domains, setDomains] = useState("");
  const [firstOrg, setFirstOrg] = useState("");
  const [kind, setKind] = useState<"human" | "machine">("human");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [email, setEmail] = useState("");
  const [givenName, setGivenName] = useState("");
  const [familyName, setFamilyName] = useState("");
  const [changeRequired, setChangeRequired] = useState(true);
  const [machineName, setMachineName] = useState("");
  const [created, setCreated] = useState<{ id: string; pat: string }>();
  if (!access.inSystem("system.instance.write")) return <InstanceList />;
  const fields = [
    "name",
    "domains",
    "first_org_name",
    "human.username",
    "human.password",
    "human.email",
    "human.given_name",
    "human.family_name",
    "machine.username",
    "machine.name",
  ];
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await form.run(async () => {
      const res = await createInstance.mutateAsync({
        name,
        domains: domains.split(/[\s,]+/).filter(Boolean),
        firstOrgName: firstOrg,
        administrator:
          kind === "human"
            ? {
                case: "human",
                value: { username, password, email, givenName, familyName, passwordChangeRequired: changeRequired },
              }
            : { case: "machine", value: { username, name: machineName } },
      });
      await qc.invalidateQueries();
      const id = res.details?.id ?? "";
      if (res.pat) setCreated({ id, pat: res.pat });
      else navigate(`/instances/${id}`);
    }, t("created"));
  };
  return (
    <Page title={t("newInstance")}>
      <BackLink to="/instances" />
      <form onSubmit={submit} noValidate>
        <ErrorText error={form.error} fields={fields} />
        <section className="card">
          <h2>{c("details")}</h2>
          <Field label={t("instanceName")} name="name" value={name} onChange={(e) => setName(e.target.value)} error={form.error} required />
          <Field
            label={t("domainsField")}
            name="domains"
            value={domains}
            onChange={(e) => setDomains(e.target.value)}
            error={form.error}
            hint={t("domainsHint")}
            autoCapitalize="none"
            spellCheck={false}
          />
          <Field label={t("firstOrgName")} name="first_org_name" value={firstOrg} onChange={(e) => setFirstOrg(e.target.value)} error={form.error} required />
        </section>
        <section className="card">
          <h2>{t("administrator")}</h2>
          <Select
            label={t("adminKind")}
            name="administrator"
            value={kind}
            onChange={(v) => setKind(v as "human" | "machine")}
            options={[
              { value: "human", label: t("adminHuman") },
              { value: "machine", label: t("adminMachine") },
            ]}
            error={form.error}
          />
          <Field
            label={t("username")}
            name={`${kind}.username`}
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            error={form.error}
            autoComplete="off"
            required
          />
          {kind === "human" ? (
            <>
              <Field
                label={t("password")}
                name="human.password"
                type="password"
                autoComplete="new-password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                error={form.error}
                required
              />
              <Field
                label={t("email")}
                name="human.email"
                type="email"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                error={form.error}
                hint={t("emailHint")}
              />
              <Field label={t("givenName")} name="human.given_name" value={givenName} onChange={(e) => setGivenName(e.target.value)} error={form.error} />
              <Field label={t("familyName")} name="human.family_name" value={familyName} onChange={(e) => setFamilyName(e.target.value)} error={form.error} />
              <Checkbox label={t("passwordChangeRequired")} name="human.password_change_required" checked={changeRequired} onChange={setChangeRequired} />
            </>
          ) : (
            <Field
              label={t("machineName")}
              name="machine.name"
              value={machineName}
              onChange={(e) => setMachineName(e.target.value)}
              error={form.error}
              required
            />
          )}
        </section>
        <div className="buttons">
          <button type="submit" className="primary" disabled={createInstance.isPending}>
            {t("createInstance")}
          </button>
        </div>
        <Status text={form.status} />
      </form>
      <SecretModal
        title={t("patTitle")}
        value={created?.pat}
        onClose={() => {
          const id = created?.id ?? "";
          setCreated(undefined);
          navigate(`/instances/${id}`);
        }}
      />
    </Page>
  );
}
