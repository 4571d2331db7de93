import { snakeKeys } from "../../domain/data-org.js";
import { changeOf } from "../../domain/settings.js";
import { propertiesOf, type SettingsKind } from "../../domain/settings-kinds.js";
import { errors } from "../../errors/errors.js";
import { createGitlabIdp } from "../idps.js";
import { addOrgDomain, setPrimaryOrgDomain } from "../org-domains.js";
import { changeSettings } from "../settings.js";
import type { OrgImport } from "./context.js";

/** The organisation's own settings the DataOrg carries: its kind, the DataOrg's key, and the wire name errors use. */
const settingsOf: [SettingsKind, "lockoutPolicy" | "passwordComplexityPolicy" | "loginPolicy", string][] = [
  ["lockout", "lockoutPolicy", "lockout_policy"],
  ["password_complexity", "passwordComplexityPolicy", "password_complexity_policy"],
  ["login", "loginPolicy", "login_policy"],
];

/** The organisation's settings, each set as one change; an unknown or fixed property refuses the whole policy. */
export async function importSettings(o: OrgImport): Promise<void> {
  for (const [kind, key, field] of settingsOf) {
    const values = o.data[key];
    if (!values || typeof values !== "object") continue;
    await o.each(field, o.orgId, async () => {
      const stored = snakeKeys(values);
      const known = propertiesOf(kind);
      const unknown = Object.keys(stored).filter((k) => !known[k] || known[k]!.fixed);
      if (unknown.length) throw errors.invalidArgument("IMPORT-s3t0", `invalid ${field}: unknown properties ${unknown.join(", ")}`);
      const change = changeOf(kind, Object.fromEntries(Object.entries(stored).map(([k, v]) => [k, { set: v }])), (p) => `${field}.${p}`);
      await changeSettings(o.deps.es, { kind, instanceId: o.req.instanceId, owner: { type: "org", id: o.orgId }, creator: o.req.creator, change });
    });
  }
}

/** The organisation's GitLab identity providers, with their IDs (users' links name them), without client secrets. */
export async function importIdps(o: OrgImport): Promise<void> {
  for (const [i, entry] of (o.data.gitlabIdps ?? []).entries()) {
    const idpId = entry.idpId ?? "";
    await o.each("gitlab_idp", idpId, async () => {
      if (!idpId) throw errors.invalidArgument("IMPORT-1dp1", `invalid gitlab_idps[${i}].idp_id: is required`);
      const there = await o.deps.db.prisma.idp.findUnique({ where: { id: idpId }, select: { instanceId: true } });
      if (there && there.instanceId !== o.req.instanceId) throw errors.alreadyExists("IMPORT-1dp2", `the identity provider ID "${idpId}" is used elsewhere`);
      if (!there) {
        const c = entry.idp ?? {};
        if (!c.name?.trim() || !c.clientId?.trim())
          throw errors.invalidArgument("IMPORT-1dp3", `invalid gitlab_idps[${i}].idp: name and client_id are required`);
        const ownerPolicy = c.ownerPolicy === "deactivate" ? "deactivate" : "activate";
        // Without its client secret, which does not travel: set it on the target before the provider is used.
        await createGitlabIdp(o.deps.es, o.deps.box, {
          id: idpId,
          owner: { type: "org", id: o.orgId, instanceId: o.req.instanceId },
          creator: o.req.creator,
          config: { name: c.name.trim(), clientId: c.clientId.trim(), scopes: c.scopes ?? [], options: c.options ?? {} },
          ownerPolicy,
        });
      }
      o.ok.gitlabIdps.push(idpId);
    });
  }
}

/**
 * The organisation's domains as exported (the import is an administrator's and trusted, as ZITADEL's: a domain
 * verified there is verified here, unless another organisation of this instance verified it first); the primary
 * one set once verified. A domain the organisation has already is left as it is.
 */
export async function importDomains(o: OrgImport): Promise<void> {
  const who = { instanceId: o.req.instanceId, orgId: o.orgId, creator: o.req.creator };
  for (const [i, entry] of (o.data.domains ?? []).entries()) {
    const name = (entry.domainName ?? "").trim().toLowerCase();
    await o.each("domain", name, async () => {
      if (!name) throw errors.invalidArgument("IMPORT-d0m1", `invalid domains[${i}].domain_name: is required`);
      const there = await o.deps.db.prisma.orgDomain.findUnique({ where: { orgId_domain: { orgId: o.orgId, domain: name } } });
      if (!there) await addOrgDomain(o.deps.es, { ...who, domain: name, verified: !!entry.isVerified });
      if (entry.isPrimary && (there?.verified ?? !!entry.isVerified)) await setPrimaryOrgDomain(o.deps.es, { ...who, domain: name });
      if (!o.ok.domains.includes(name)) o.ok.domains.push(name);
    });
  }
}
