// Security and domain settings: one card of properties each.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { DomainSettingsService, type SetDomainSettingsSchema } from "../../../../gen/svc/settings/domain/v3alpha/domain_service_pb.js";
import { SecuritySettingsService, type SetSecuritySettingsSchema } from "../../../../gen/svc/settings/security/v3alpha/security_service_pb.js";
import { useT } from "../../i18n";
import { messages } from "../../i18n/settings";
import { SettingsPage, useLevel } from "./common";
import { PropertiesCard, type PropDef, type Resolved } from "./properties";

type Settings = Record<string, Resolved | undefined>;

export function SecuritySettings() {
  const t = useT(messages);
  const choice = useLevel();
  const { ctx, level, canWrite } = choice;
  const q = useQuery(SecuritySettingsService.method.resolveSecuritySettings, { ctx });
  const set = useMutation(SecuritySettingsService.method.setSecuritySettings);
  const defs: PropDef[] = [
    { name: "enable_impersonation", label: t("enableImpersonation"), type: "bool", hint: t("enableImpersonationHint") },
    { name: "enable_iframe_embedding", label: t("enableIframeEmbedding"), type: "bool", hint: t("enableIframeEmbeddingHint") },
    { name: "allowed_origins", label: t("allowedOrigins"), type: "strings", hint: t("allowedOriginsHint") },
  ];
  return (
    <SettingsPage title={t("securityTitle")} intro={t("securityIntro")} choice={choice}>
      <PropertiesCard
        title={t("securityCard")}
        defs={defs}
        resolved={q.data?.settings as Settings | undefined}
        details={q.data?.details}
        level={level}
        canWrite={canWrite}
        loading={q.isPending}
        loadError={q.error}
        save={(s) => set.mutateAsync({ ctx, settings: s as MessageInitShape<typeof SetSecuritySettingsSchema> })}
      />
    </SettingsPage>
  );
}

export function DomainSettings() {
  const t = useT(messages);
  const choice = useLevel();
  const { ctx, level, canWrite } = choice;
  const q = useQuery(DomainSettingsService.method.resolveDomainSettings, { ctx });
  const set = useMutation(DomainSettingsService.method.setDomainSettings);
  const defs: PropDef[] = [
    { name: "validate_org_domains", label: t("validateOrgDomains"), type: "bool", hint: t("validateOrgDomainsHint") },
    { name: "user_login_must_be_domain", label: t("userLoginMustBeDomain"), type: "bool", hint: t("userLoginMustBeDomainHint") },
    { name: "smtp_sender_address_matches_instance_domain", label: t("smtpSenderMatches"), type: "bool", hint: t("smtpSenderMatchesHint") },
  ];
  return (
    <SettingsPage title={t("domainTitle")} intro={t("domainIntro")} choice={choice}>
      <PropertiesCard
        title={t("domainCard")}
        defs={defs}
        resolved={q.data?.settings as Settings | undefined}
        details={q.data?.details}
        level={level}
        canWrite={canWrite}
        loading={q.isPending}
        loadError={q.error}
        save={(s) => set.mutateAsync({ ctx, settings: s as MessageInitShape<typeof SetDomainSettingsSchema> })}
      />
    </SettingsPage>
  );
}
