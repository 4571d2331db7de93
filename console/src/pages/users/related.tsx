// What hangs on a user: its metadata, its accounts at identity providers, its memberships and its sessions.
import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import type { GetMembership } from "../../../../gen/svc/resources/membership/v3alpha/membership_service_pb.js";
import { MembershipService } from "../../../../gen/svc/resources/membership/v3alpha/membership_service_pb.js";
import { type Session, SessionService } from "../../../../gen/svc/resources/session/v3alpha/session_service_pb.js";
import { type IDPLink, type UserMetadataEntry, UserService } from "../../../../gen/svc/resources/user/v3alpha/user_service_pb.js";
import { useAccess, useOrg } from "../../access";
import { errorOf } from "../../api";
import { useT } from "../../i18n";
import { messages as coreMessages } from "../../i18n/core";
import { messages } from "../../i18n/users";
import { type Column, ConfirmButton, DataTable, ErrorText, Field, Status, useDate, usePaging, useRun } from "../../ui";
import { bytesText, useCanIn, useChange } from "./common";
import type { SectionProps } from "./detail";

export function MetadataSection({ user, orgId }: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(orgId);
  const id = user.details?.id ?? "";
  const list = useQuery(UserService.method.listUserMetadata, { id });
  const form = useRun();
  const set = useChange(UserService.method.setUserMetadata);
  const remove = useChange(UserService.method.removeUserMetadata);
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const writable = can("user.write");

  const columns: Column<UserMetadataEntry>[] = [
    { key: "key", label: t("metadataKey"), render: (m) => m.key },
    {
      key: "value",
      label: t("metadataValue"),
      render: (m) => {
        const v = bytesText(m.value);
        return v.base64 ? t("base64Value", { value: v.text }) : v.text;
      },
    },
  ];
  if (writable) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (m) => (
        <ConfirmButton
          label={c("remove")}
          question={t("confirmRemoveMetadata", { key: m.key })}
          onConfirm={() => form.run(() => remove.mutateAsync({ id, key: m.key }), t("removedDone"))}
        />
      ),
    });
  }

  return (
    <section className="card">
      <h2>{t("metadata")}</h2>
      <ErrorText error={form.error ?? (list.error ? errorOf(list.error) : undefined)} fields={["metadata[0].key", "metadata[0].value"]} />
      <DataTable caption={t("metadataCaption")} columns={columns} rows={list.data?.metadata} rowKey={(m) => m.key} loading={list.isFetching} />
      {writable && (
        <form
          className="toolbar"
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await form.run(() => set.mutateAsync({ id, metadata: [{ key: key.trim(), value: new TextEncoder().encode(value) }] }), c("saved"));
            if (r) {
              setKey("");
              setValue("");
            }
          }}
        >
          <Field
            label={t("metadataKey")}
            name="metadata[0].key"
            required
            hint={t("metadataKeyHint")}
            value={key}
            onChange={(e) => setKey(e.target.value)}
            error={form.error}
          />
          <Field label={t("metadataValue")} name="metadata[0].value" value={value} onChange={(e) => setValue(e.target.value)} error={form.error} />
          <div className="field">
            <button type="submit" className="primary" disabled={form.busy}>
              {t("setMetadata")}
            </button>
          </div>
        </form>
      )}
      <Status text={form.status} />
    </section>
  );
}

export function IdpLinksSection({ user, orgId }: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const can = useCanIn(orgId);
  const id = user.details?.id ?? "";
  const page = usePaging();
  const list = useQuery(UserService.method.searchIDPLinks, { id, query: page.query });
  const form = useRun();
  const remove = useChange(UserService.method.removeIDPLink);

  const columns: Column<IDPLink>[] = [
    { key: "idp", label: t("idpId"), render: (l) => l.idpId },
    { key: "user", label: t("idpUserId"), render: (l) => l.userId },
    { key: "name", label: t("idpUserName"), render: (l) => l.userName },
  ];
  if (can("user.write")) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (l) => (
        <ConfirmButton
          label={c("remove")}
          question={t("confirmRemoveLink", { user: l.userName || l.userId, idp: l.idpId })}
          onConfirm={() => form.run(() => remove.mutateAsync({ id, idpId: l.idpId, linkedUserId: l.userId }), t("removedDone"))}
        />
      ),
    });
  }
  return (
    <section className="card">
      <h2>{t("idpLinks")}</h2>
      <ErrorText error={form.error ?? (list.error ? errorOf(list.error) : undefined)} />
      <DataTable
        caption={t("idpLinksCaption")}
        columns={columns}
        rows={list.data?.result}
        rowKey={(l) => `${l.idpId}:${l.userId}`}
        paging={page.paging(list.data?.details?.totalResult)}
        loading={list.isFetching}
      />
      <Status text={form.status} />
    </section>
  );
}

/** Which permission removes a membership of this context (the API decides; this only hides what would fail). */
function useMayRemoveMembership(): (m: GetMembership) => boolean {
  const access = useAccess();
  const { orgId } = useOrg();
  return (m) => {
    const ctx = m.membership?.context?.context;
    switch (ctx?.case) {
      case "instance":
        return access.everywhere("iam.member.delete");
      case "organizationId":
        return access.inOrg("org.member.delete", ctx.value);
      case "projectId":
        return (
          access.inOrg("project.member.delete", orgId) ||
          access.memberships.some((x) => x.context.case === "projectId" && x.context.value === ctx.value && x.permissions.includes("project.member.delete"))
        );
      case "projectGrantId":
        return access.inOrg("project.grant.member.delete", orgId);
      default:
        return false;
    }
  };
}

export function MembershipsSection({ user, orgId }: SectionProps) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const date = useDate();
  const id = user.details?.id ?? "";
  const readable = ["iam.member.read", "org.member.read", "project.member.read", "project.grant.member.read"].some((p) => access.inOrg(p, orgId));
  const page = usePaging();
  const list = useQuery(
    MembershipService.method.searchMemberships,
    { query: page.query, filters: [{ filter: { case: "userId", value: id } }] },
    { enabled: readable },
  );
  const form = useRun();
  const remove = useChange(MembershipService.method.deleteMembership);
  const mayRemove = useMayRemoveMembership();
  if (!readable) return null;

  const contextOf = (m: GetMembership) => {
    const ctx = m.membership?.context?.context;
    switch (ctx?.case) {
      case "instance":
        return t("ctxInstance");
      case "organizationId":
        return t("ctxOrg", { id: ctx.value });
      case "projectId":
        return t("ctxProject", { id: ctx.value });
      case "projectGrantId":
        return t("ctxProjectGrant", { id: ctx.value });
      default:
        return "";
    }
  };
  const columns: Column<GetMembership>[] = [
    { key: "context", label: t("membershipContext"), render: contextOf },
    { key: "roles", label: t("roles"), render: (m) => m.membership?.roles.join(", ") ?? "" },
    { key: "changed", label: c("changed"), render: (m) => date(m.details?.changeDate) },
    {
      key: "actions",
      label: c("actions"),
      render: (m) =>
        mayRemove(m) && (
          <ConfirmButton
            label={c("remove")}
            question={t("confirmRemoveMembership", { context: contextOf(m) })}
            onConfirm={() => form.run(() => remove.mutateAsync({ id: m.details?.id ?? "" }), t("removedDone"))}
          />
        ),
    },
  ];
  return (
    <section className="card">
      <h2>{t("memberships")}</h2>
      <ErrorText error={form.error ?? (list.error ? errorOf(list.error) : undefined)} />
      <DataTable
        caption={t("membershipsCaption")}
        columns={columns}
        rows={list.data?.result}
        rowKey={(m) => m.details?.id ?? ""}
        paging={page.paging(list.data?.details?.totalResult)}
        loading={list.isFetching}
      />
      <Status text={form.status} />
    </section>
  );
}

/** Sessions are checked in the instance (SessionService has no resource context): an organisation's role cannot read them. */
export function SessionsSection({ user }: { user: SectionProps["user"] }) {
  const t = useT(messages);
  const c = useT(coreMessages);
  const access = useAccess();
  const date = useDate();
  const id = user.details?.id ?? "";
  const readable = access.everywhere("session.read");
  const page = usePaging();
  const list = useQuery(
    SessionService.method.searchSessions,
    { query: page.query, filters: [{ filter: { case: "userId", value: id } }] },
    { enabled: readable },
  );
  const form = useRun();
  const remove = useChange(SessionService.method.deleteSession);
  if (!readable) return null;

  const factorsOf = (s: Session) => {
    const f = s.factors;
    const out: string[] = [];
    if (f?.password) out.push(t("factorPassword"));
    if (f?.webAuthN) out.push(f.webAuthN.userVerified ? t("passkey") : t("securityKey"));
    if (f?.totp) out.push(t("factorTotp"));
    if (f?.otpEmail) out.push(t("factorOtpEmail"));
    if (f?.otpSms) out.push(t("factorOtpSms"));
    if (f?.intent) out.push(t("factorIdp", { id: f.intent.idpId }));
    return out.join(", ");
  };
  const columns: Column<Session>[] = [
    { key: "id", label: c("id"), render: (s) => s.id },
    { key: "created", label: c("created"), render: (s) => date(s.creationDate) },
    { key: "changed", label: t("lastActivity"), render: (s) => date(s.changeDate) },
    { key: "expires", label: t("expires"), render: (s) => (s.expirationDate ? date(s.expirationDate) : t("never")) },
    { key: "factors", label: t("provedFactors"), render: factorsOf },
  ];
  if (access.everywhere("session.delete")) {
    columns.push({
      key: "actions",
      label: c("actions"),
      render: (s) => (
        <ConfirmButton
          label={t("terminate")}
          question={t("confirmTerminate", { id: s.id })}
          onConfirm={() => form.run(() => remove.mutateAsync({ id: s.id }), t("terminatedDone"))}
        />
      ),
    });
  }
  return (
    <section className="card">
      <h2>{t("sessions")}</h2>
      <ErrorText error={form.error ?? (list.error ? errorOf(list.error) : undefined)} />
      <DataTable
        caption={t("sessionsCaption")}
        columns={columns}
        rows={list.data?.result}
        rowKey={(s) => s.id}
        paging={page.paging(list.data?.details?.totalResult)}
        loading={list.isFetching}
      />
      <Status text={form.status} />
    </section>
  );
}
