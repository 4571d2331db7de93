import type { Org } from "../../gen/prisma/client.js";
import { randomBytesPooled } from "../crypto/random.js";
import { domainNameProblem, type ValidationType } from "../domain/org-domains.js";
import { errors } from "../errors/errors.js";
import type { EventStore, EventWriter, NewEvent } from "../eventstore/eventstore.js";
import type { ChangeDetails } from "./aggregate.js";
import {
  orgDomainAdded,
  orgDomainPrimarySet,
  orgDomainRemoved,
  orgDomainValidationAdded,
  orgDomainValidationFailed,
  orgDomainVerified,
  userDomainClaimed,
} from "../events/index.js";

/**
 * An organisation's domains (ZITADEL's org domains). The generated `<name>.<instance domain>` one is verified
 * and primary from the start and follows renames (orgs.ts); others are added, verified by validation (or at once
 * where the domain settings do not ask for it), made primary, removed. A domain is verified in at most one
 * organisation of an instance: every change that verifies one holds a lock on the name, and verifying it takes
 * it from the other organisations: their unverified entries go, and their users named `…@<domain>` get a
 * temporary username and a mail (`user.domain.claimed`, the notification worker sends it).
 */
type Who = { instanceId: string; orgId: string; creator: string };

const notFound = (orgId: string, domain: string) => errors.notFound("ODOM-n0tf", `domain "${domain}" of organization "${orgId}" not found`);
const takenElsewhere = (domain: string) => errors.alreadyExists("ODOM-t4kn", `the domain "${domain}" is verified by another organization of this instance`);

/** The domain as stored: lower case, checked (INVALID_ARGUMENT naming the field). */
export function normalDomain(domain: string): string {
  const d = domain.trim().toLowerCase();
  const problem = domainNameProblem(d);
  if (problem) throw errors.invalidArgument("ODOM-1nv4", `invalid domain: ${problem}`);
  return d;
}

/** One change to an organisation's domains, in one transaction with the organisation locked. */
async function onOrg(es: EventStore, a: Who, decide: (org: Org, w: EventWriter) => Promise<NewEvent[]>): Promise<ChangeDetails> {
  const { result } = await es.execute(async (w): Promise<ChangeDetails> => {
    await w.lock(a.instanceId, "org", a.orgId);
    const org = await w.tx.org.findFirst({ where: { id: a.orgId, instanceId: a.instanceId } });
    if (!org) throw errors.notFound("ODOM-0rg0", `organization "${a.orgId}" not found`);
    const events = await decide(org, w);
    const stored = await w.push(a.instanceId, a.creator, events);
    const own = stored.filter((e) => e.aggregateId === org.id).at(-1);
    return {
      id: org.id,
      sequence: own?.sequence ?? org.sequence,
      changeDate: own?.createdAt ?? org.changeDate,
      instanceId: a.instanceId,
      resourceOwner: org.id,
    };
  });
  return result;
}

const ref = (orgId: string) => ({ aggregateId: orgId, resourceOwner: orgId });

async function domainOf(w: EventWriter, org: Org, domain: string) {
  const row = await w.tx.orgDomain.findUnique({ where: { orgId_domain: { orgId: org.id, domain } } });
  if (!row) throw notFound(org.id, domain);
  return row;
}

/**
 * The events that give `domain` to `org` alone, under the lock on the name: ALREADY_EXISTS when another
 * organisation verified it; else the others' unverified entries go, and their users named `…@<domain>` are
 * renamed to `<user ID>@temporary.<instance domain>`.
 */
async function claim(w: EventWriter, org: Org, domain: string): Promise<NewEvent[]> {
  const others = await w.tx.orgDomain.findMany({ where: { instanceId: org.instanceId, domain, NOT: { orgId: org.id } } });
  if (others.some((o) => o.verified)) throw takenElsewhere(domain);
  const generated = await w.tx.orgDomain.findFirst({ where: { orgId: org.id, generated: true }, select: { domain: true } });
  const base = (generated?.domain ?? org.primaryDomain).split(".").slice(1).join(".");
  const users = await w.tx.user.findMany({
    where: { instanceId: org.instanceId, loginName: { endsWith: `@${domain}` }, NOT: { orgId: org.id } },
    select: { id: true, orgId: true },
  });
  return [
    ...others.map((o) => orgDomainRemoved.event(ref(o.orgId), { domain })),
    ...users.map((u) => userDomainClaimed.event({ aggregateId: u.id, resourceOwner: u.orgId }, { username: `${u.id}@temporary.${base}`, domain })),
  ];
}

const lockName = (w: EventWriter, instanceId: string, domain: string) => w.lock(instanceId, "org_domain", domain);

/** `verified`: the domain settings do not ask for validation (validate_org_domains off). */
export function addOrgDomain(es: EventStore, a: Who & { domain: string; verified: boolean }): Promise<ChangeDetails> {
  const domain = normalDomain(a.domain);
  return onOrg(es, a, async (org, w) => {
    await lockName(w, a.instanceId, domain);
    if (await w.tx.orgDomain.findUnique({ where: { orgId_domain: { orgId: org.id, domain } } }))
      throw errors.alreadyExists("ODOM-3x1s", `the organization has the domain "${domain}" already`);
    const verifiedElsewhere = await w.tx.orgDomain.findFirst({ where: { instanceId: a.instanceId, domain, verified: true }, select: { orgId: true } });
    if (verifiedElsewhere) throw takenElsewhere(domain);
    return [orgDomainAdded.event(ref(org.id), { domain, verified: a.verified }), ...(a.verified ? await claim(w, org, domain) : [])];
  });
}

export function removeOrgDomain(es: EventStore, a: Who & { domain: string }): Promise<ChangeDetails> {
  const domain = a.domain.trim().toLowerCase();
  return onOrg(es, a, async (org, w) => {
    const row = await domainOf(w, org, domain);
    if (row.generated) throw errors.failedPrecondition("ODOM-g3n0", `"${domain}" is the organization's generated domain: it follows its name and stays`);
    if (row.isPrimary) throw errors.failedPrecondition("ODOM-pr1m", `"${domain}" is the primary domain: set another one as primary first`);
    return [orgDomainRemoved.event(ref(org.id), { domain })];
  });
}

export function setPrimaryOrgDomain(es: EventStore, a: Who & { domain: string }): Promise<ChangeDetails> {
  const domain = a.domain.trim().toLowerCase();
  return onOrg(es, a, async (org, w) => {
    const row = await domainOf(w, org, domain);
    if (!row.verified) throw errors.failedPrecondition("ODOM-unv1", `"${domain}" is not verified: validate it first`);
    return row.isPrimary ? [] : [orgDomainPrimarySet.event(ref(org.id), { domain })];
  });
}

/** A new token for the domain (replacing the one before); FAILED_PRECONDITION when it is verified already. */
export async function generateOrgDomainValidation(
  es: EventStore,
  a: Who & { domain: string; validationType: ValidationType },
): Promise<ChangeDetails & { token: string }> {
  const domain = a.domain.trim().toLowerCase();
  const token = randomBytesPooled(24).toString("base64url");
  const details = await onOrg(es, a, async (org, w) => {
    const row = await domainOf(w, org, domain);
    if (row.verified) throw errors.failedPrecondition("ODOM-v3r1", `"${domain}" is verified already`);
    return [orgDomainValidationAdded.event(ref(org.id), { domain, validationType: a.validationType, token })];
  });
  return { ...details, token };
}

/**
 * The outcome of a validation of `token` (`problem`: what the check found instead, or undefined). A failure is
 * recorded and returned; a success verifies the domain and claims it. FAILED_PRECONDITION when the token is
 * no longer the domain's (a newer validation was generated meanwhile).
 */
export async function recordOrgDomainValidation(
  es: EventStore,
  a: Who & { domain: string; token: string; problem: string | undefined },
): Promise<ChangeDetails> {
  const domain = a.domain.trim().toLowerCase();
  return onOrg(es, a, async (org, w) => {
    await lockName(w, a.instanceId, domain);
    const row = await domainOf(w, org, domain);
    if (row.verified) return [];
    if (row.validationToken !== a.token) throw errors.failedPrecondition("ODOM-t0k3", `a newer validation of "${domain}" was generated: validate again`);
    if (a.problem) return [orgDomainValidationFailed.event(ref(org.id), { domain, reason: a.problem })];
    return [orgDomainVerified.event(ref(org.id), { domain }), ...(await claim(w, org, domain))];
  });
}
