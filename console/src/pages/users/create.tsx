// /users/create/human and /users/create/machine: a new user of the chosen organisation (CreateUser with its ctx).
import { useId, useState } from "react";
import { AccessTokenType } from "../../../../gen/svc/resources/user/v3alpha/user_pb.js";
import { UserService } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { orgCtx, useOrg } from "../../access";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";
import { navigate } from "../../router";
import { BackLink, Checkbox, ErrorText, Field, Page, useRun } from "../../ui";
import { useChange } from "./common";
import { ContactFields, NameFields, UsernameField } from "./fields";
import { MachineFields } from "./machine-fields";
import { listHref } from "./list";

const humanFields = [
  "user.username",
  "user.human.profile.given_name",
  "user.human.profile.family_name",
  "user.human.email.address",
  "user.human.phone.number",
  "user.human.password.password",
];

export function CreateHuman() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const { orgId } = useOrg();
  const create = useChange(UserService.method.createUser);
  const form = useRun();
  const [username, setUsername] = useState("");
  const [givenName, setGivenName] = useState("");
  const [familyName, setFamilyName] = useState("");
  const [email, setEmail] = useState("");
  const [emailVerified, setEmailVerified] = useState(false);
  const [phone, setPhone] = useState("");
  const [mode, setMode] = useState<"mail" | "set">("mail");
  const [password, setPassword] = useState("");
  const [changeRequired, setChangeRequired] = useState(true);
  const radio = useId();

  return (
    <Page title={t("newHuman")}>
      <BackLink to={listHref()} label={t("backToList")} />
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await form.run(() =>
            create.mutateAsync({
              ctx: orgCtx(orgId),
              user: {
                username: username.trim(),
                type: {
                  case: "human",
                  value: {
                    profile: { givenName, familyName },
                    email: { address: email.trim(), isVerified: emailVerified },
                    ...(phone.trim() ? { phone: { number: phone.trim() } } : {}),
                    ...(mode === "set" ? { password: { value: { case: "password", value: password }, changeRequired } } : {}),
                  },
                },
              },
            }),
          );
          if (r?.details?.id) navigate(`/users/${encodeURIComponent(r.details.id)}`);
        }}
      >
        <ErrorText error={form.error} fields={humanFields} />
        <UsernameField value={[username, setUsername]} error={form.error} />
        <NameFields prefix="user.human.profile." given={[givenName, setGivenName]} family={[familyName, setFamilyName]} error={form.error} />
        <ContactFields
          kind="email"
          label={t("email")}
          required
          value={[email, setEmail]}
          verified={[emailVerified, setEmailVerified]}
          verifiedLabel={t("emailVerifiedCreate")}
          error={form.error}
        />
        <ContactFields kind="phone" label={t("phoneOptional")} hint={t("phoneHint")} value={[phone, setPhone]} error={form.error} />
        <fieldset className="field">
          <legend>{t("initialPassword")}</legend>
          <div className="field-check">
            <input id={`${radio}-mail`} type="radio" name="password_mode" checked={mode === "mail"} onChange={() => setMode("mail")} />
            <label htmlFor={`${radio}-mail`}>{t("passwordByMail")}</label>
          </div>
          <div className="field-check">
            <input id={`${radio}-set`} type="radio" name="password_mode" checked={mode === "set"} onChange={() => setMode("set")} />
            <label htmlFor={`${radio}-set`}>{t("passwordSetNow")}</label>
          </div>
        </fieldset>
        {mode === "set" && (
          <>
            <Field
              label={t("password")}
              name="user.human.password.password"
              type="password"
              autoComplete="new-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              error={form.error}
            />
            <Checkbox label={t("changeRequired")} name="user.human.password.change_required" checked={changeRequired} onChange={setChangeRequired} />
          </>
        )}
        {mode === "mail" && <p className="hint">{t("passwordByMailHint")}</p>}
        <div className="buttons">
          <button type="submit" className="primary" disabled={form.busy}>
            {c("create")}
          </button>
          <button type="button" onClick={() => navigate(listHref())}>
            {c("cancel")}
          </button>
        </div>
      </form>
    </Page>
  );
}

const machineFields = ["user.username", "user.machine.name", "user.machine.description", "user.machine.access_token_type"];

export function CreateMachine() {
  const t = useT(messages);
  const c = useT(coreMessages);
  const { orgId } = useOrg();
  const create = useChange(UserService.method.createUser);
  const form = useRun();
  const [username, setUsername] = useState("");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [tokenType, setTokenType] = useState(String(AccessTokenType.OPAQUE));

  return (
    <Page title={t("newMachine")}>
      <BackLink to={listHref()} label={t("backToList")} />
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await form.run(() =>
            create.mutateAsync({
              ctx: orgCtx(orgId),
              user: {
                username: username.trim(),
                type: { case: "machine", value: { name, description, accessTokenType: Number(tokenType) as AccessTokenType } },
              },
            }),
          );
          if (r?.details?.id) navigate(`/users/${encodeURIComponent(r.details.id)}`);
        }}
      >
        <ErrorText error={form.error} fields={machineFields} />
        <UsernameField value={[username, setUsername]} hint={t("machineUsernameHint")} error={form.error} />
        <MachineFields
          name={name}
          setName={setName}
          description={description}
          setDescription={setDescription}
          tokenType={tokenType}
          setTokenType={setTokenType}
          error={form.error}
        />
        <div className="buttons">
          <button type="submit" className="primary" disabled={form.busy}>
            {c("create")}
          </button>
          <button type="button" onClick={() => navigate(listHref())}>
            {c("cancel")}
          </button>
        </div>
      </form>
    </Page>
  );
}
