/**
 * A PostgreSQL URL with one server or several, as libpq takes them: `postgres://user:pw@h1:5432,h2:5433/db
 * ?target_session_attrs=read-write`. node-postgres reads one host only (and the WHATWG URL parser refuses the
 * list), so the servers are taken out here and the rest is a URL with the first of them.
 */
export interface DatabaseUrl {
  /** The URL with only its first server: user, password, database and options, as node-postgres reads them. */
  single: string;
  /** Every server, in the order given. */
  hosts: { host: string; port: number }[];
  /**
   * Whether only a server that takes writes will do (libpq's `target_session_attrs` `read-write` or `primary`):
   * the default with several servers, since the server writes; `any` takes the first that answers.
   */
  writable: boolean;
}

const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/s;
const SESSION_ATTRS = new Set(["any", "read-write", "primary"]);

/** Splits a DATABASE_URL into its servers and the rest; throws an Error saying what is wrong. */
export function parseDatabaseUrl(value: string): DatabaseUrl {
  const parts = URL_PARTS.exec(value);
  if (!parts) return { single: value, hosts: [], writable: false };
  const [, scheme, userinfo = "", authority, rest] = parts as unknown as [string, string, string | undefined, string, string];
  // no server in the authority: a socket directory in the options (?host=/var/run/postgresql)
  if (!authority) return { single: value, hosts: [], writable: false };
  const servers = authority.split(",");
  if (servers.some((s) => !s)) throw new Error("lists an empty server: give host:port pairs separated by commas");
  const hosts = servers.map((s) => {
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(s);
    if (!m) throw new Error(`has a server that is not host[:port]: ${JSON.stringify(s)}`);
    return { host: m[1]!.replace(/^\[|\]$/g, ""), port: m[2] ? Number(m[2]) : 5432 };
  });
  const [path, query = ""] = splitOnce(rest, "?");
  const params = new URLSearchParams(query);
  const attrs = params.get("target_session_attrs");
  if (attrs !== null && !SESSION_ATTRS.has(attrs)) {
    throw new Error(`has target_session_attrs=${attrs}; the server writes, so only read-write, primary or any will do`);
  }
  params.delete("target_session_attrs");
  const options = params.toString();
  return {
    single: `${scheme}${userinfo}${servers[0]}${path}${options ? `?${options}` : ""}`,
    hosts,
    writable: attrs === null ? hosts.length > 1 : attrs !== "any",
  };
}

function splitOnce(s: string, separator: string): [string, string | undefined] {
  const i = s.indexOf(separator);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

/** The URL as it may be shown: the password replaced. */
export function shownDatabaseUrl(value: string): string {
  return value.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}
