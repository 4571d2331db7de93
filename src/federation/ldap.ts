import type { ConnectionOptions } from "node:tls";
import { AndFilter, Client, EqualityFilter, type Filter, InvalidCredentialsError, OrFilter, type Entry, SizeLimitExceededError } from "ldapts";
import type { ExternalUser, StoredProvider } from "./provider.js";

/**
 * Sign-in against an LDAP directory (kind `ldap`) with ldapts: bind as the service account, search for the one
 * entry whose user attributes match the typed login name, then bind as that entry with the typed password. The
 * filter is built as objects and sent as BER, so a login name is only ever a value (`*)(uid=*` matches nothing
 * but itself; RFC 4515's escaping is what ldapts applies when it is written as text). Servers are tried in order
 * until one answers; every connection goes to an address the outbound policy allowed (`resolve`).
 */
export interface LdapSettings {
  servers: string[];
  startTls: boolean;
  baseDn: string;
  bindDn: string;
  bindPassword: string;
  /** A DN: where the search starts. Else the attribute whose value the user binds as ("dn": the entry's DN). */
  userBase: string;
  userObjectClasses: string[];
  userFilters: string[];
  timeoutMs: number;
  /** PEM of the authorities trusted besides the system's. */
  rootCa: string;
  attributes: Partial<Record<LdapField, string>>;
}

/** The account fields a directory attribute can fill (LDAPAttributes, without `_attribute`). */
export type LdapField =
  | "id"
  | "firstName"
  | "lastName"
  | "displayName"
  | "nickName"
  | "preferredUsername"
  | "email"
  | "emailVerified"
  | "phone"
  | "phoneVerified"
  | "preferredLanguage"
  | "avatarUrl"
  | "profile";

/** Turns a host into the address a connection may go to (OutboundHttp.address), refusing denied ones. */
export type ResolveAllowed = (host: string) => Promise<string>;

/** No directory answered (every server refused, timed out, or failed its TLS check). */
export class DirectoryUnreachable extends Error {}

export class LdapFederation {
  constructor(private readonly resolve: ResolveAllowed) {}

  /**
   * The directory's user for the login name and password, or a refusal: `wrongFor` is the external ID of the
   * entry found when only the password was wrong (its linked account counts the failure), undefined when no one
   * entry matched. Throws DirectoryUnreachable when no server could be asked (none answered, or none
   * took the service account's bind), and what the search threw (a misconfigured provider is not a wrong password).
   */
  async signIn(s: LdapSettings, loginName: string, password: string): Promise<{ user: ExternalUser } | { wrongFor: string | undefined }> {
    if (!loginName) return { wrongFor: undefined };
    const client = await this.connect(s);
    try {
      const entry = await findUser(client, s, loginName);
      const user = entry && externalUserOfEntry(s, entry, loginName);
      const bindAs = entry && bindNameOf(s, entry);
      if (!user || !bindAs) return { wrongFor: undefined };
      // An empty password is an unauthenticated bind, which directories accept (RFC 4513 5.1.2): never a sign-in.
      if (!password) return { wrongFor: user.id };
      try {
        await client.bind(bindAs, password);
      } catch (e) {
        if (e instanceof InvalidCredentialsError) return { wrongFor: user.id };
        throw e;
      }
      return { user };
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  /** A connection to the first server that answers, upgraded to TLS when asked, bound as the service account. */
  private async connect(s: LdapSettings): Promise<Client> {
    const problems: string[] = [];
    for (const server of s.servers) {
      try {
        return await this.connectTo(server, s);
      } catch (e) {
        problems.push(`${server}: ${(e as Error).message}`);
      }
    }
    throw new DirectoryUnreachable(`no LDAP server answered (${problems.join("; ")})`);
  }

  private async connectTo(server: string, s: LdapSettings): Promise<Client> {
    const url = new URL(server);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const address = await this.resolve(host);
    const secure = url.protocol === "ldaps:";
    // The connection goes to the address checked; the certificate is checked against the name written.
    const named = host !== address;
    const tls: ConnectionOptions = {
      ...(named ? { servername: host } : {}),
      ...(s.rootCa ? { ca: [...caCertificates(s.rootCa)] } : {}),
      rejectUnauthorized: true,
    };
    const port = url.port || (secure ? "636" : "389");
    const client = new Client({
      url: `${secure ? "ldaps" : "ldap"}://${address.includes(":") ? `[${address}]` : address}:${port}`,
      timeout: s.timeoutMs,
      connectTimeout: s.timeoutMs,
      ...(secure ? { tlsOptions: tls } : {}),
    });
    try {
      if (!secure && s.startTls) await client.startTLS({ ...tls, host: address });
      await client.bind(s.bindDn, s.bindPassword);
    } catch (e) {
      await client.unbind().catch(() => undefined);
      throw e;
    }
    return client;
  }
}

/** Each PEM certificate of a bundle. */
function caCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

const looksLikeDn = (s: string) => s.includes("=");

/** The one entry under the search base whose user attributes match the login name; undefined for none or several. */
async function findUser(client: Client, s: LdapSettings, loginName: string): Promise<Entry | undefined> {
  const filters = s.userFilters.length ? s.userFilters : ["uid"];
  const parts: Filter[] = s.userObjectClasses.map((c) => new EqualityFilter({ attribute: "objectClass", value: c }));
  parts.push(new OrFilter({ filters: filters.map((attribute) => new EqualityFilter({ attribute, value: loginName })) }));
  try {
    const { searchEntries } = await client.search(looksLikeDn(s.userBase) ? s.userBase : s.baseDn, {
      scope: "sub",
      filter: new AndFilter({ filters: parts }),
      sizeLimit: 2,
      attributes: ["*"],
    });
    return searchEntries.length === 1 ? searchEntries[0] : undefined;
  } catch (e) {
    // More than one entry: the login name names no one user.
    if (e instanceof SizeLimitExceededError) return undefined;
    throw e;
  }
}

/** What the user binds as: the entry's DN, or the value of the attribute `user_base` names (Active Directory's userPrincipalName). */
function bindNameOf(s: LdapSettings, entry: Entry): string | undefined {
  if (!s.userBase || s.userBase.toLowerCase() === "dn" || looksLikeDn(s.userBase)) return entry.dn;
  return first(entry, s.userBase);
}

function first(entry: Entry, attribute: string): string | undefined {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  const v = key === undefined ? undefined : entry[key];
  const value = Array.isArray(v) ? v[0] : v;
  if (value === undefined) return undefined;
  const text = Buffer.isBuffer(value) ? value.toString("hex") : String(value);
  return text || undefined;
}

const truthy = (v: string | undefined) => v !== undefined && ["true", "1", "t", "yes"].includes(v.toLowerCase());

/** The entry's fields as the provider's attribute mapping says (the ID from `uid` when none is named). */
function externalUserOfEntry(s: LdapSettings, entry: Entry, loginName: string): ExternalUser | undefined {
  const a = s.attributes;
  const of = (f: LdapField) => (a[f] ? first(entry, a[f]) : undefined);
  const id = first(entry, a.id || "uid");
  if (!id) return undefined;
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) {
    if (k.toLowerCase() === "userpassword") continue;
    raw[k] = Array.isArray(v) ? v.map((x) => (Buffer.isBuffer(x) ? x.toString("base64") : x)) : Buffer.isBuffer(v) ? v.toString("base64") : v;
  }
  return {
    id,
    username: of("preferredUsername") ?? loginName,
    email: of("email"),
    emailVerified: truthy(of("emailVerified")),
    givenName: of("firstName"),
    familyName: of("lastName"),
    displayName: of("displayName"),
    preferredLanguage: of("preferredLanguage"),
    raw,
  };
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** A proto JSON duration ("1.5s") in milliseconds; absent or zero: the default. */
function durationMs(v: unknown): number {
  const s = typeof v === "string" ? Number.parseFloat(v) : 0;
  return Number.isFinite(s) && s > 0 ? Math.min(s * 1000, 60_000) : DEFAULT_TIMEOUT_MS;
}

/** The settings of a stored `ldap` provider (its configuration as proto JSON, the bind password opened). */
export function ldapSettingsOf(p: StoredProvider): LdapSettings {
  const c = p.config;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const mapped = (c.attributes ?? {}) as Record<string, unknown>;
  const attributes: Partial<Record<LdapField, string>> = {};
  for (const [k, v] of Object.entries(mapped)) {
    if (typeof v === "string" && v && k.endsWith("Attribute")) attributes[k.slice(0, -"Attribute".length) as LdapField] = v;
  }
  return {
    servers: strings(c.servers),
    startTls: c.startTls === true,
    baseDn: text(c.baseDn),
    bindDn: text(c.bindDn),
    bindPassword: p.secret ?? "",
    userBase: text(c.userBase),
    userObjectClasses: strings(c.userObjectClasses),
    userFilters: strings(c.userFilters),
    timeoutMs: durationMs(c.timeout),
    rootCa: text(c.rootCa),
    attributes,
  };
}
