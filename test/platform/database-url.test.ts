import { describe, expect, it } from "vitest";
import { parseDatabaseUrl, shownDatabaseUrl } from "../../src/config/database-url.js";
import { loadConfig } from "../../src/config/config.js";
import { ConfigError } from "../../src/config/startup-error.js";

/** DATABASE_URL with several servers, as libpq takes it (issue 32: a primary that fails over). */
describe("a DATABASE_URL", () => {
  it("with several servers: each host and port, the rest as a URL of the first, read-write unless it says any", () => {
    expect(parseDatabaseUrl("postgres://svc:p%40ss@db-a:5433,db-b,[::1]:5434/iam?sslmode=require&target_session_attrs=read-write")).toEqual({
      single: "postgres://svc:p%40ss@db-a:5433/iam?sslmode=require",
      hosts: [
        { host: "db-a", port: 5433 },
        { host: "db-b", port: 5432 },
        { host: "::1", port: 5434 },
      ],
      writable: true,
    });
    expect(parseDatabaseUrl("postgres://db-a,db-b/iam").writable).toBe(true);
    expect(parseDatabaseUrl("postgres://db-a,db-b/iam?target_session_attrs=any").writable).toBe(false);
  });

  it("with one server or a socket directory: unchanged", () => {
    expect(parseDatabaseUrl("postgres://svc@db:5432/iam")).toEqual({
      single: "postgres://svc@db:5432/iam",
      hosts: [{ host: "db", port: 5432 }],
      writable: false,
    });
    expect(parseDatabaseUrl("postgres:///iam?host=/var/run/postgresql").single).toBe("postgres:///iam?host=/var/run/postgresql");
  });

  it("is refused at start with a reason for an empty server, a bad port or a session kind the server cannot write to", () => {
    const refusal = (url: string) => {
      try {
        loadConfig({ DATABASE_URL: url, SVC_MASTERKEY: "0123456789abcdef0123456789abcdef" }, []);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error(`accepted ${url}`);
    };
    expect(refusal("postgres://db-a,,db-b/iam")).toMatch(/DATABASE_URL lists an empty server/);
    expect(refusal("postgres://db-a,db-b:54x/iam")).toMatch(/DATABASE_URL has a server that is not host\[:port\]/);
    expect(refusal("postgres://db-a,db-b/iam?target_session_attrs=standby")).toMatch(/target_session_attrs=standby/);
    expect(loadConfig({ DATABASE_URL: "postgres://db-a,db-b/iam", SVC_MASTERKEY: "0123456789abcdef0123456789abcdef" }, []).databaseUrl).toBe(
      "postgres://db-a,db-b/iam",
    );
  });

  it("is shown without its password", () => {
    expect(shownDatabaseUrl("postgres://svc:secret@db-a,db-b/iam")).toBe("postgres://svc:***@db-a,db-b/iam");
    expect(shownDatabaseUrl("postgres://svc@db/iam")).toBe("postgres://svc@db/iam");
  });
});
