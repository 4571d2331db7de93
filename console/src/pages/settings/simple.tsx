// Security and domain settings: one card of properties each.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { DomainSettingsService, type SetDomainSettingsSchema } from "../../../../gen/svc/settings/domain/v3alpha/domain_service_pb.js";
import { SecuritySettingsService, type SetSecuritySettingsSchema } from "../../../../gen/svc/settings/security/v3alpha/security_service_pb.js";
import { useT } from "../../i18n";
import { messages } from "../../i18n/settings";
import { type LevelChoice, SettingsPage, type T, useLevel } from "./common";
import { type PropDef, ResolvedCard } from "./properties";

/** A settings page of one card of boolean (or list) properties. */
function OneCardPage({
  title,
  intro,
  card,
  defs,
  choice,
  q,
  save,
}: {
  title: string;
  intro: string;
  card: string;
  defs: PropDef[];
  choice: LevelChoice;
  q: Parameters<typeof ResolvedCard>[0]["q"];
  save: (settings: Record<string, unknown>) => Promise<unknown>;
}) {
  return (
    <SettingsPage title={title} intro={intro} choice={choice}>
      <ResolvedCard title={card} defs={defs} q={q} choice={choice} save={save} />
    </SettingsPage>
  );
}

const bool = (t: T, name: string, label: Parameters<T>[0], hint: Parameters<T>[0]): PropDef => ({ name, label: t(label), type: "bool", hint: t(hint) });

export function SecuritySettings() {
  const t = useT(messages);
  const choice = useLevel();
  const q = useQuery(SecuritySettingsService.method.resolveSecuritySettings, { ctx: choice.ctx });
  const set = useMutation(SecuritySettingsService.method.setSecuritySettings);
  return (
    <OneCardPage
      title={t("securityTitle")}
      intro={t("securityIntro")}
      card={t("securityCard")}
      defs={[
        bool(t, "enable_impersonation", "enableImpersonation", "enableImpersonationHint"),
        bool(t, "enable_iframe_embedding", "enableIframeEmbedding", "enableIframeEmbeddingHint"),
        { name: "allowed_origins", label: t("allowedOrigins"), type: "strings", hint: t("allowedOriginsHint") },
      ]}
      choice={choice}
      q={q}
      save={(s) => set.mutateAsync({ ctx: choice.ctx, settings: s as MessageInitShape<typeof SetSecuritySettingsSchema> })}
    />
  );
}

export function DomainSettings() {
  const t = useT(messages);
  const choice = useLevel();
  const q = useQuery(DomainSettingsService.method.resolveDomainSettings, { ctx: choice.ctx });
  const set = useMutation(DomainSettingsService.method.setDomainSettings);
  return (
    <OneCardPage
      title={t("domainTitle")}
      intro={t("domainIntro")}
      card={t("domainCard")}
      defs={[
        bool(t, "validate_org_domains", "validateOrgDomains", "validateOrgDomainsHint"),
        bool(t, "user_login_must_be_domain", "userLoginMustBeDomain", "userLoginMustBeDomainHint"),
        bool(t, "smtp_sender_address_matches_instance_domain", "smtpSenderMatches", "smtpSenderMatchesHint"),
      ]}
      choice={choice}
      q={q}
      save={(s) => set.mutateAsync({ ctx: choice.ctx, settings: s as MessageInitShape<typeof SetDomainSettingsSchema> })}
    />
  );
}
