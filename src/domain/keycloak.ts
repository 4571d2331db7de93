import type { DataOrg, HumanUserShape } from "./data-org.js";

/**
 * Keycloak realm export -> import body (contract, anchor-notes §4.3). Users keep their ID, username, names,
 * e-mail and its verified flag; the first password credential becomes `$<algorithm>$<iterations>$<salt>$<hash>`
 * (Keycloak's pbkdf2, pbkdf2-sha256 and pbkdf2-sha512 are the forms the server verifies), a TOTP credential
 * becomes `otpCode` (ZITADEL's tool drops it). What has no place in the import body (roles, groups, other
 * credentials) is reported, not converted.
 */
export interface KeycloakReport {
  users: number;
  passwords: number;
  otp: number;
  /** Per user: what of it could not be converted (the user itself is). */
  problems: { userId: string; username: string; message: string }[];
  notConverted: { realmRoles: string[]; clientRoles: string[]; groups: string[]; userRoleAssignments: number; userGroupMemberships: number };
}

interface KeycloakCredential {
  type?: string;
  secretData?: string;
  credentialData?: string;
}
interface KeycloakUser {
  id?: string;
  username?: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  emailVerified?: boolean;
  credentials?: KeycloakCredential[];
  realmRoles?: string[];
  clientRoles?: Record<string, string[]>;
  groups?: string[];
}
interface KeycloakRealm {
  users?: KeycloakUser[];
  roles?: { realm?: { name?: string }[]; client?: Record<string, { name?: string }[]> };
  groups?: { name?: string; path?: string; subGroups?: unknown[] }[];
}

export class RealmError extends Error {}

/** The pbkdf2 variants Keycloak writes, each a form src/crypto/password.ts verifies. */
const PBKDF2 = new Set(["pbkdf2", "pbkdf2-sha1", "pbkdf2-sha224", "pbkdf2-sha256", "pbkdf2-sha384", "pbkdf2-sha512"]);

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

function parsed(json: string | undefined, what: string): Record<string, unknown> {
  try {
    const v = JSON.parse(json ?? "");
    if (v && typeof v === "object") return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new Error(`its ${what} is not JSON`);
}

function passwordOf(c: KeycloakCredential): string {
  const secret = parsed(c.secretData, "password secretData");
  const data = parsed(c.credentialData, "password credentialData");
  const algorithm = String(data.algorithm ?? "");
  if (!PBKDF2.has(algorithm)) throw new Error(`unsupported password algorithm "${algorithm}" (pbkdf2, pbkdf2-sha256 and pbkdf2-sha512 are)`);
  const iterations = Number(data.hashIterations);
  if (!Number.isInteger(iterations) || iterations < 1) throw new Error("the password credential has no hashIterations");
  if (typeof secret.salt !== "string" || typeof secret.value !== "string") throw new Error("the password credential has no salt or value");
  return `$${algorithm}$${iterations}$${secret.salt}$${secret.value}`;
}

/** Keycloak keeps the TOTP secret as text and shows authenticator apps its UTF-8 bytes in base32 (newer versions: already base32). */
function otpOf(c: KeycloakCredential): string {
  const secret = parsed(c.secretData, "otp secretData");
  const data = parsed(c.credentialData, "otp credentialData");
  if ((data.subType ?? "totp") !== "totp") throw new Error(`the ${String(data.subType)} credential (HOTP) is not converted: only TOTP is supported`);
  const algorithm = String(data.algorithm ?? "HmacSHA1");
  if (algorithm !== "HmacSHA1" || Number(data.digits ?? 6) !== 6 || Number(data.period ?? 30) !== 30) {
    throw new Error(
      `the TOTP credential (${algorithm}, ${String(data.digits)} digits, ${String(data.period)} s) is not converted: only HmacSHA1, 6 digits, 30 s is supported`,
    );
  }
  if (typeof secret.value !== "string" || !secret.value) throw new Error("the TOTP credential has no secret");
  return data.secretEncoding === "BASE32" ? secret.value.toUpperCase() : base32(Buffer.from(secret.value, "utf8"));
}

function groupPaths(groups: KeycloakRealm["groups"], out: string[] = []): string[] {
  for (const g of groups ?? []) {
    out.push(g.path ?? `/${g.name ?? ""}`);
    groupPaths(g.subGroups as KeycloakRealm["groups"], out);
  }
  return out;
}

/** The import body for organisation `orgId` from the parsed realm export, and what was (not) converted. */
export function convertRealm(
  realm: unknown,
  orgId: string,
  timeout: string,
): { body: { dataOrgs: { orgs: DataOrg[] }; timeout: string }; report: KeycloakReport } {
  if (!realm || typeof realm !== "object" || Array.isArray(realm)) throw new RealmError("the realm file is not a Keycloak realm export (a JSON object)");
  const r = realm as KeycloakRealm;
  if (r.users !== undefined && !Array.isArray(r.users)) throw new RealmError("the realm's users must be a list");
  const report: KeycloakReport = {
    users: 0,
    passwords: 0,
    otp: 0,
    problems: [],
    notConverted: {
      realmRoles: (r.roles?.realm ?? []).map((x) => x.name ?? ""),
      clientRoles: Object.entries(r.roles?.client ?? {}).flatMap(([client, roles]) => roles.map((x) => `${client}:${x.name ?? ""}`)),
      groups: groupPaths(r.groups),
      userRoleAssignments: 0,
      userGroupMemberships: 0,
    },
  };
  const humanUsers: NonNullable<DataOrg["humanUsers"]> = [];
  for (const u of r.users ?? []) {
    const problem = (message: string) => report.problems.push({ userId: u.id ?? "", username: u.username ?? "", message });
    if (!u.id || !u.username) {
      problem("the user has no id or username: not converted");
      continue;
    }
    const user: HumanUserShape = {
      userName: u.username,
      profile: { firstName: u.firstName ?? "", lastName: u.lastName ?? "" },
      email: { email: u.email ?? "", isEmailVerified: u.emailVerified === true },
    };
    // Only the first password, as Keycloak uses it.
    const password = u.credentials?.find((c) => c.type === "password");
    if (password) {
      try {
        user.hashedPassword = { value: passwordOf(password) };
        report.passwords++;
      } catch (e) {
        problem(`${(e as Error).message}; the user is converted without a password (the import mails them the initialisation link)`);
      }
    }
    const otp = u.credentials?.find((c) => c.type === "otp");
    if (otp) {
      try {
        user.otpCode = otpOf(otp);
        report.otp++;
      } catch (e) {
        problem((e as Error).message);
      }
    }
    report.notConverted.userRoleAssignments += (u.realmRoles?.length ?? 0) + Object.values(u.clientRoles ?? {}).flat().length;
    report.notConverted.userGroupMemberships += u.groups?.length ?? 0;
    humanUsers.push({ userId: u.id, user });
    report.users++;
  }
  return { body: { dataOrgs: { orgs: [{ orgId, humanUsers }] }, timeout }, report };
}
