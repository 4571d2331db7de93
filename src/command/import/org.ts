import { idpLists, snakeKeys } from "../../domain/data-org.js";
import { changeOf } from "../../domain/settings.js";
import { propertiesOf, type SettingsKind } from "../../domain/settings-kinds.js";
import { errors } from "../../errors/errors.js";
import { createIdp } from "../idps.js";
import { IDP_KINDS } from "../../domain/idps.js";
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

/**
 * The organisation's identity providers of every kind, with their IDs (users' links name them), without their
 * secrets (set them on the target before a provider is used). Each configuration passes the kind's checks as a
 * create's does (`ImportDeps.idpConfig`).
 */
export async function importIdps(o: OrgImport): Promise<void> {
  for (const kind of IDP_KINDS) {
    const list = idpLists[kind];
    const field = list.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    for (const [i, entry] of (o.data[list] ?? []).entries()) {
      const idpId = entry.idpId ?? "";
      await o.each(field.replace(/s$/, ""), idpId, async () => {
        if (!idpId) throw errors.invalidArgument("IMPORT-1dp1", `invalid ${field}[${i}].idp_id: is required`);
        const there = await o.deps.db.prisma.idp.findUnique({ where: { id: idpId }, select: { instanceId: true } });
        if (there && there.instanceId !== o.req.instanceId) throw errors.alreadyExists("IMPORT-1dp2", `the identity provider ID "${idpId}" is used elsewhere`);
        if (!there) {
          const { name, options, ownerPolicy, ...config } = entry.idp ?? {};
          if (typeof name !== "string" || !name.trim()) throw errors.invalidArgument("IMPORT-1dp3", `invalid ${field}[${i}].idp.name: is required`);
          const stored = o.deps.idpConfig(kind, config, `${field}[${i}].idp`);
          await createIdp(o.deps.es, o.deps.box, {
            id: idpId,
            kind,
            owner: { type: "org", id: o.orgId, instanceId: o.req.instanceId },
            creator: o.req.creator,
            config: { name: name.trim(), options: options ?? {}, config: stored.config },
            ownerPolicy: ownerPolicy === "deactivate" ? "deactivate" : "activate",
          });
        }
        o.ok[list] = [...(o.ok[list] ?? []), idpId];
      });
    }
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
