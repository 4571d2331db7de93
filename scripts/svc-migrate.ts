#!/usr/bin/env -S node --import tsx
/**
 * svc-migrate: turns other identity systems' exports into the body of POST /admin/v1/import (contract).
 *   svc-migrate keycloak --org <org id> --realm <realm.json> [--output ./importBody.json] [--timeout 30m] [--multiline] [--dry-run]
 * The report of what was not converted goes to stderr; with --dry-run only the counts, nothing is written.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { formatGoDuration, parseGoDuration } from "../src/domain/data-org.js";
import { convertRealm, RealmError } from "../src/domain/keycloak.js";

const USAGE = "usage: svc-migrate keycloak --org <org id> --realm <realm.json> [--output ./importBody.json] [--timeout 30m] [--multiline] [--dry-run]";

function fail(message: string, code = 1): never {
  process.stderr.write(`svc-migrate: ${message}\n`);
  process.exit(code);
}

function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (command !== "keycloak") fail(command ? `unknown command "${command}"\n${USAGE}` : USAGE, 2);
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        org: { type: "string" },
        realm: { type: "string", default: "./realm.json" },
        output: { type: "string", default: "./importBody.json" },
        timeout: { type: "string", default: "30m" },
        multiline: { type: "boolean", default: false },
        "dry-run": { type: "boolean", default: false },
      },
    }));
  } catch (e) {
    fail(`${(e as Error).message}\n${USAGE}`, 2);
  }
  const org = String(values.org ?? "").trim();
  if (!org) fail(`--org is required: the ID of the organisation the users go to (it must exist)\n${USAGE}`, 2);
  const ms = parseGoDuration(String(values.timeout));
  if (ms === undefined || ms <= 0) fail(`--timeout must be a duration such as 30m or 1h (got "${String(values.timeout)}")`, 2);
  let text: string;
  try {
    text = readFileSync(String(values.realm), "utf8");
  } catch (e) {
    fail(`cannot read the realm file ${String(values.realm)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let realm: unknown;
  try {
    realm = JSON.parse(text);
  } catch (e) {
    fail(`the realm file ${String(values.realm)} is not JSON: ${(e as Error).message}`);
  }
  let converted: ReturnType<typeof convertRealm>;
  try {
    converted = convertRealm(realm, org, formatGoDuration(ms));
  } catch (e) {
    if (e instanceof RealmError) fail(e.message);
    throw e;
  }
  const { body, report } = converted;
  for (const p of report.problems) process.stderr.write(`user ${p.userId} (${p.username}): ${p.message}\n`);
  const n = report.notConverted;
  const summary = {
    users: report.users,
    passwords: report.passwords,
    otp: report.otp,
    problems: report.problems.length,
    notConverted: {
      realmRoles: n.realmRoles,
      clientRoles: n.clientRoles,
      groups: n.groups,
      userRoleAssignments: n.userRoleAssignments,
      userGroupMemberships: n.userGroupMemberships,
    },
  };
  process.stderr.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (values["dry-run"]) return;
  writeFileSync(String(values.output), `${JSON.stringify(body, null, values.multiline ? 2 : undefined)}\n`);
  process.stderr.write(`wrote ${String(values.output)}\n`);
}

main(process.argv.slice(2));
