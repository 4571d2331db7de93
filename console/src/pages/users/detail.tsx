// /users/<id>: one user: its overview and state, profile, and the sections of a human (addresses, password,
// second factors) or a machine (secret, keys, tokens), then metadata, linked accounts, memberships and sessions.
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { AccessTokenType, type GetUser, UserState } from "../../../../gen/svc/resources/user/v3alpha/user_pb.js";
import { UserService } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { useOrg } from "../../access";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";
import { navigate } from "../../router";
import { BackLink, ConfirmButton, ErrorText, Field, Page, Status, useDate, useRun } from "../../ui";
import { useCanIn, useChange, useStateLabel } from "./common";
import { EmailSection, FactorsSection, PasswordSection, PhoneSection } from "./human";
import { displayNameOf, listHref } from "./list";
import { CredentialsSection, SecretSection } from "./machine";
import { NameFields, UsernameField } from "./fields";
import { MachineFields } from "./machine-fields";
import { IdpLinksSection, MembershipsSection, MetadataSection, SessionsSection } from "./related";

export function UserDetail({ id }: { id: string }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const { orgId } = useOrg();
  const found = useQuery(UserService.method.getUser, { id });
  const user = found.data?.user;
  if (!user) {
    return (
      <Page title={t("userTitle")}>
        <BackLink to={listHref()} label={t("backToList")} />
        {found.isError ? <ErrorText error={errorOf(found.error)} /> : <p role="status">{c("loading")}</p>}
      </Page>
    );
  }
  const userOrg = user.details?.resourceOwner?.id || orgId;
  return (
    <Page title={displayNameOf(user) || user.username}>
      <BackLink to={listHref()} label={t("backToList")} />
      <Overview user={user} orgId={userOrg} />
      <ProfileSection user={user} orgId={userOrg} />
      {user.type.case === "human" && (
        <>
          <EmailSection user={user} orgId={userOrg} />
          <PhoneSection user={user} orgId={userOrg} />
          <PasswordSection user={user} orgId={userOrg} />
          <FactorsSection user={user} orgId={userOrg} />
        </>
      )}
      {user.type.case === "machine" && (
        <>
          <SecretSection user={user} orgId={userOrg} />
          <CredentialsSection user={user} orgId={userOrg} />
        </>
      )}
      <MetadataSection user={user} orgId={userOrg} />
      {user.type.case === "human" && <IdpLinksSection user={user} orgId={userOrg} />}
      <MembershipsSection user={user} orgId={userOrg} />
      {/* machines sign in with tokens, not sessions */}
      {user.type.case === "human" && <SessionsSection user={user} />}
    </Page>
  );
}

export interface SectionProps {
  user: GetUser;
  /** The user's organisation, where its permissions are checked. */
  orgId: string;
}

function Overview({ user, orgId }: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(orgId);
  const date = useDate();
  const stateLabel = useStateLabel();
  const form = useRun();
  const qc = useQueryClient();
  const id = user.details?.id ?? "";
  const lock = useChange(UserService.method.lockUser);
  const unlock = useChange(UserService.method.unlockUser);
  const deactivate = useChange(UserService.method.deactivateUser);
  const reactivate = useChange(UserService.method.reactivateUser);
  // not useChange: the user is gone, so its own queries must not be read again
  const remove = useMutation(UserService.method.deleteUser);
  const name = displayNameOf(user) || user.username;
  const human = user.type.case === "human" ? user.type.value : undefined;
  const machine = user.type.case === "machine" ? user.type.value : undefined;
  const s = user.state;
  return (
    <section className="card">
      <h2>{t("overview")}</h2>
      <dl className="props">
        <dt>{c("id")}</dt>
        <dd>{id}</dd>
        <dt>{t("username")}</dt>
        <dd>{user.username}</dd>
        <dt>{t("type")}</dt>
        <dd>{machine ? t("machine") : t("human")}</dd>
        <dt>{c("state")}</dt>
        <dd>
          {stateLabel(s)}
          {s === UserState.INITIAL && <span className="hint"> {t("stateInitialHint")}</span>}
        </dd>
        <dt>{c("organization")}</dt>
        <dd>{user.details?.resourceOwner?.id ?? ""}</dd>
        <dt>{c("changed")}</dt>
        <dd>{date(user.details?.changeDate)}</dd>
        {human && (
          <>
            <dt>{t("password")}</dt>
            <dd>{human.passwordChanged ? t("passwordSetOn", { date: date(human.passwordChanged) }) : t("noPassword")}</dd>
            <dt>{t("changeRequired")}</dt>
            <dd>{human.passwordChangeRequired ? t("yes") : t("no")}</dd>
          </>
        )}
        {machine && (
          <>
            <dt>{t("accessTokenType")}</dt>
            <dd>{machine.accessTokenType === AccessTokenType.JWT ? t("tokenJwt") : t("tokenOpaque")}</dd>
            <dt>{t("clientSecret")}</dt>
            <dd>{machine.hasSecret ? t("yes") : t("no")}</dd>
          </>
        )}
        {user.schemaId && (
          <>
            <dt>{t("schema")}</dt>
            <dd>{t("schemaRevision", { id: user.schemaId, revision: String(user.schemaRevision) })}</dd>
          </>
        )}
      </dl>
      {user.data && Object.keys(user.data).length > 0 && <pre className="json">{JSON.stringify(user.data, null, 2)}</pre>}
      <ErrorText error={form.error} />
      <div className="buttons">
        {can("user.write") && (s === UserState.ACTIVE || s === UserState.INITIAL) && (
          <ConfirmButton
            className=""
            label={t("lock")}
            question={t("confirmLock", { name })}
            onConfirm={() => form.run(() => lock.mutateAsync({ id }), t("lockedDone"))}
          />
        )}
        {can("user.write") && s === UserState.LOCKED && (
          <button type="button" onClick={() => form.run(() => unlock.mutateAsync({ id }), t("unlockedDone"))}>
            {t("unlock")}
          </button>
        )}
        {can("user.write") && s !== UserState.INACTIVE && (
          <ConfirmButton
            className=""
            label={c("deactivate")}
            question={t("confirmDeactivate", { name })}
            onConfirm={() => form.run(() => deactivate.mutateAsync({ id }), t("deactivatedDone"))}
          />
        )}
        {can("user.write") && s === UserState.INACTIVE && (
          <button type="button" onClick={() => form.run(() => reactivate.mutateAsync({ id }), t("reactivatedDone"))}>
            {c("reactivate")}
          </button>
        )}
        {can("user.delete") && (
          <ConfirmButton
            label={c("delete")}
            question={c("confirmDelete", { name })}
            onConfirm={async () => {
              const r = await form.run(() => remove.mutateAsync({ id }));
              if (!r) return;
              navigate(listHref());
              await qc.invalidateQueries({ queryKey: createConnectQueryKey({ schema: UserService.method.searchUsers, cardinality: undefined }) });
            }}
          />
        )}
      </div>
      <Status text={form.status} />
    </section>
  );
}

const profileFields = [
  "user.username",
  "user.human.given_name",
  "user.human.family_name",
  "user.human.nick_name",
  "user.human.display_name",
  "user.human.preferred_language",
  "user.machine.name",
  "user.machine.description",
  "user.machine.access_token_type",
];

function ProfileSection({ user, orgId }: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(orgId);
  const form = useRun();
  const patch = useChange(UserService.method.patchUser);
  const id = user.details?.id ?? "";
  const p = user.type.case === "human" ? user.type.value.profile : undefined;
  const m = user.type.case === "machine" ? user.type.value : undefined;
  const [username, setUsername] = useState(user.username);
  const [givenName, setGivenName] = useState(p?.givenName ?? "");
  const [familyName, setFamilyName] = useState(p?.familyName ?? "");
  const [nickName, setNickName] = useState(p?.nickName ?? "");
  const [displayName, setDisplayName] = useState(p?.displayName ?? "");
  const [language, setLanguage] = useState(p?.preferredLanguage ?? "");
  const [name, setName] = useState(m?.name ?? "");
  const [description, setDescription] = useState(m?.description ?? "");
  const [tokenType, setTokenType] = useState(String(m?.accessTokenType ?? AccessTokenType.OPAQUE));
  const writable = can("user.write");

  const save = () => {
    const changed = <T,>(now: T, before: T | undefined) => (now !== before ? now : undefined);
    const usernameChange = changed(username.trim(), user.username);
    return patch.mutateAsync({
      id,
      user: {
        ...(usernameChange !== undefined ? { username: usernameChange } : {}),
        type: p
          ? {
              case: "human",
              value: {
                givenName: changed(givenName, p.givenName),
                familyName: changed(familyName, p.familyName),
                nickName: changed(nickName, p.nickName),
                displayName: changed(displayName, p.displayName),
                preferredLanguage: changed(language.trim(), p.preferredLanguage),
              },
            }
          : {
              case: "machine",
              value: {
                name: changed(name, m?.name),
                description: changed(description, m?.description),
                accessTokenType: changed(Number(tokenType) as AccessTokenType, m?.accessTokenType),
              },
            },
      },
    });
  };

  if (!writable) {
    return (
      <section className="card">
        <h2>{t("profile")}</h2>
        <dl className="props">
          {p && (
            <>
              <dt>{t("givenName")}</dt>
              <dd>{p.givenName}</dd>
              <dt>{t("familyName")}</dt>
              <dd>{p.familyName}</dd>
              <dt>{t("nickName")}</dt>
              <dd>{p.nickName}</dd>
              <dt>{t("displayName")}</dt>
              <dd>{p.displayName}</dd>
              <dt>{t("preferredLanguage")}</dt>
              <dd>{p.preferredLanguage}</dd>
            </>
          )}
          {m && (
            <>
              <dt>{c("name")}</dt>
              <dd>{m.name}</dd>
              <dt>{t("description")}</dt>
              <dd>{m.description}</dd>
            </>
          )}
        </dl>
      </section>
    );
  }

  return (
    <section className="card">
      <h2>{t("profile")}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void form.run(save, c("saved"));
        }}
      >
        <ErrorText error={form.error} fields={profileFields} />
        <UsernameField value={[username, setUsername]} error={form.error} />
        {p && (
          <>
            <NameFields prefix="user.human." given={[givenName, setGivenName]} family={[familyName, setFamilyName]} error={form.error} />
            <Field label={t("nickName")} name="user.human.nick_name" value={nickName} onChange={(e) => setNickName(e.target.value)} error={form.error} />
            <Field
              label={t("displayName")}
              name="user.human.display_name"
              required
              value={displayName}
              onChange={(e) => setDisplayName(e.target.value)}
              error={form.error}
            />
            <Field
              label={t("preferredLanguage")}
              name="user.human.preferred_language"
              hint={t("preferredLanguageHint")}
              maxLength={2}
              value={language}
              onChange={(e) => setLanguage(e.target.value)}
              error={form.error}
            />
          </>
        )}
        {m && (
          <MachineFields
            name={name}
            setName={setName}
            description={description}
            setDescription={setDescription}
            tokenType={tokenType}
            setTokenType={setTokenType}
            error={form.error}
          />
        )}
        <button type="submit" className="primary" disabled={form.busy}>
          {c("save")}
        </button>
      </form>
      <Status text={form.status} />
    </section>
  );
}
