import { Code, ConnectError } from "@connectrpc/connect";
import { parseGoDuration, type DataOrg, type ImportSuccessOrg } from "../../domain/data-org.js";
import { errors } from "../../errors/errors.js";
import { createOrg } from "../orgs.js";
import { importMembers, importProjectGrantMembers, importProjectGrants, importUserGrants } from "./access.js";
import { ImportDeadline, type ImportDeps, type ImportRequest, type ImportResult, type OrgImport } from "./context.js";
import { importDomains, importIdps, importSettings } from "./org.js";
import { importApplications, importProjectRoles, importProjects } from "./projects.js";
import { importHumanUsers, importMachineUsers, importUserLinks, importUserMetadata } from "./users.js";

export { ImportDeadline, type ImportDeps, type ImportRequest, type ImportResult } from "./context.js";

/**
 * The data import (contract, anchor-notes §4.1): organisations with their IDs, then in ZITADEL's order
 * their settings, humans, machines, projects, roles, applications, user grants and members (one step per
 * kind, in this directory). Each object is written by the ordinary command (or its events) in a transaction
 * of its own, with the creator `import:<caller>`, so an object is there whole or not at all; one that fails
 * is reported in `errors` and the rest goes on. An object whose ID is already there is left alone and
 * counted as done: the same import twice creates nothing twice, and an import cut short by its timeout
 * completes when run again.
 */
const steps: [phase: string, step: (o: OrgImport) => Promise<void>][] = [
  ["settings", importSettings],
  // Before the users: login names use them.
  ["domains", importDomains],
  // Before the users: their links name the providers.
  ["idps", importIdps],
  ["human_users", importHumanUsers],
  ["user_links", importUserLinks],
  ["machine_users", importMachineUsers],
  ["user_metadata", importUserMetadata],
  ["projects", importProjects],
  ["project_roles", importProjectRoles],
  ["applications", importApplications],
];

/**
 * What links organisations to each other: grants of projects to other organisations, user grants (of other
 * organisations' users, through those grants) and memberships. They run once every organisation of the import
 * has its users and projects, so that the order of the organisations in the file does not matter.
 */
const linkSteps: ((o: OrgImport) => Promise<void>)[] = [importProjectGrants, importUserGrants, importMembers, importProjectGrantMembers];

/** The milliseconds a `timeout` string allows; INVALID_ARGUMENT when it is no duration (default 30 minutes when empty). */
export function timeoutOf(timeout: unknown, field = "timeout"): number {
  if (timeout === undefined || timeout === null || timeout === "") return 30 * 60_000;
  const ms = typeof timeout === "string" ? parseGoDuration(timeout.trim()) : undefined;
  if (ms === undefined || ms <= 0 || ms > 24 * 3_600_000) {
    throw errors.invalidArgument("IMPORT-t1m3", `invalid ${field}: must be a duration such as "30m", "90s" or "1h30m" (more than 0, at most 24h)`);
  }
  return ms;
}

export async function importData(deps: ImportDeps, req: ImportRequest): Promise<ImportResult> {
  const result: ImportResult = { errors: [], success: { orgs: [] } };
  const check = () => {
    if (deps.es.clock.now() >= req.deadline) throw new ImportDeadline(result);
  };
  const imported: OrgImport[] = [];
  const report = req.progress ?? (() => {});
  report({ total: req.orgs.length, done: 0 });
  for (const [i, data] of req.orgs.entries()) {
    check();
    report({ done: i, orgName: data.org?.name ?? data.orgId ?? "" });
    const o = await importOrg(deps, req, data, i, result, check);
    if (o) imported.push(o);
  }
  report({ phase: "links", orgName: "" });
  for (const o of imported) for (const step of linkSteps) await step(o);
  report({ done: req.orgs.length, phase: "" });
  return result;
}

/** The organisation and what it owns alone; undefined when the organisation itself could not be placed. */
async function importOrg(
  deps: ImportDeps,
  req: ImportRequest,
  data: DataOrg,
  index: number,
  result: ImportResult,
  check: () => void,
): Promise<OrgImport | undefined> {
  const orgId = data.orgId ?? "";
  const fail = (type: string, id: string, err: unknown) => {
    if (err instanceof ImportDeadline) throw err;
    // A fault of the server is not the entry's fault: it stops the import (and is logged as such).
    if (!(err instanceof ConnectError) || err.code === Code.Internal) throw err;
    result.errors.push({ type, id, message: err.rawMessage });
  };
  const each = async (type: string, id: string, run: () => Promise<void>) => {
    check();
    try {
      await run();
    } catch (err) {
      fail(type, id, err);
    }
  };

  if (!orgId) {
    result.errors.push({ type: "org", id: "", message: `invalid data_orgs.orgs[${index}].org_id: is required` });
    return undefined;
  }
  let orgReady = false;
  await each("org", orgId, async () => {
    const existing = await deps.db.prisma.org.findUnique({ where: { id: orgId } });
    if (existing && existing.instanceId !== req.instanceId)
      throw errors.alreadyExists("IMPORT-0rgx", `the organization ID "${orgId}" is used in another instance`);
    if (!existing) {
      const name = data.org?.name?.trim();
      if (!name) throw errors.invalidArgument("IMPORT-0rgn", `invalid data_orgs.orgs[${index}].org.name: is required`);
      await createOrg(deps.es, { instanceId: req.instanceId, creator: req.creator, id: orgId, name, domain: req.instanceDomain });
    }
    orgReady = true;
  });
  // Without its organisation nothing of it can be placed.
  if (!orgReady) return undefined;
  const ok: ImportSuccessOrg = {
    orgId,
    humanUserIds: [],
    machineUserIds: [],
    projectIds: [],
    projectRoles: [],
    oidcAppIds: [],
    apiAppIds: [],
    userGrants: [],
    orgMembers: [],
    projectMembers: [],
    projectGrants: [],
    projectGrantMembers: [],
    userLinks: [],
    userMetadata: [],
    gitlabIdps: [],
    domains: [],
  };
  result.success.orgs.push(ok);
  const org = await deps.db.prisma.org.findUniqueOrThrow({ where: { id: orgId } });
  ok.domains.push(org.primaryDomain);

  const o: OrgImport = { deps, req, data, orgId, ok, base: { instanceId: req.instanceId, creator: req.creator }, each, fail, check };
  // what each step placed, for a job's progress: the report's lists grow as objects are placed
  const placed = () => Object.values(ok).reduce((n, v) => n + (Array.isArray(v) ? v.length : 0), 0);
  for (const [phase, step] of steps) {
    req.progress?.({ phase });
    const before = placed();
    await step(o);
    req.progress?.({ objects: placed() - before });
  }
  return o;
}
