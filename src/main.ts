import net from "node:net";
import { parseArgs, usage } from "./config/cli.js";
import { loadConfig, type Config } from "./config/config.js";
import { shownDatabaseUrl } from "./config/database-url.js";
import { ConfigError, StartupError } from "./config/startup-error.js";
import { setPasswordHashCost } from "./crypto/password.js";
import type { Logger } from "pino";
import type { WorkerMessage, WorkerRole } from "./server/worker-peers.js";

/** Whether an unexpected start-up error may print its stack: SVC_LOG_LEVEL=debug (or trace). */
let debug = /^(debug|trace)$/i.test(process.env.SVC_LOG_LEVEL ?? "");
/** What failed, for the one line: "cannot start" or "cannot migrate". */
let failing = "cannot start";

/**
 * Fails fast, before anything touches the disk or the database, when SVC_PORT cannot be bound: a busy port
 * used to be found only after the whole set-up (seconds, and a new data directory left behind). The probe
 * binds and closes at once; port 0 (any free port) cannot be busy. Another process may still take the port
 * in between; the listener's own error is then reported as one line too (see `oneLine`).
 */
async function checkPort(config: Config): Promise<void> {
  if (config.port === 0) return;
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen({ port: config.port, host: config.host, exclusive: true }, resolve);
    });
  } catch (err) {
    throw listenError(err, config.port, config.host) ?? err;
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}

/** A listen error in words naming the variable, or undefined for a kind not known here. */
function listenError(err: unknown, port: number, host: string): StartupError | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") return new StartupError(`SVC_PORT ${port} on ${host} is already in use: stop the other process or choose another SVC_PORT`);
  if (code === "EACCES") return new StartupError(`SVC_PORT ${port} on ${host}: permission denied (ports below 1024 need privileges)`);
  if (code === "EADDRNOTAVAIL") return new StartupError(`SVC_HOST ${host} is not an address of this machine`);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return new StartupError(`SVC_HOST ${host} cannot be resolved`);
  return undefined;
}

/**
 * A failure to reach or enter the PostgreSQL server of DATABASE_URL, in words naming the variable (the storage
 * layer throws StartupError where it knows more; this catches what the driver throws). Connection errors
 * carry a Node error code, refusals by the server a SQLSTATE of class 08 (connection), 28 (authorization)
 * or 3D (no such database). The URL is shown without its password.
 */
function databaseError(err: unknown, config: Config): StartupError | undefined {
  if (config.databaseUrl === undefined || err instanceof StartupError) return undefined;
  const code = String((err as { code?: unknown }).code ?? "");
  const network = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ECONNRESET"].includes(code);
  if (!network && !/^(08|28|3D)[0-9A-Z]{3}$/.test(code)) return undefined;
  const url = shownDatabaseUrl(config.databaseUrl);
  // a refused connection to a name with several addresses is an AggregateError with an empty message
  const why = (err as Error).message.split("\n")[0] || code;
  return new StartupError(`DATABASE_URL ${url}: ${why}`, { cause: err });
}

/**
 * The database for a tool beside the server (`recover`, `projections rebuild`). With the embedded database a
 * running server owns the data directory; the tool then connects to that server's PostgreSQL as a client
 * through its socket, else it starts the embedded server itself.
 */
async function openForTool(config: Config) {
  const { openDatabase } = await import("./storage/database.js");
  const { runningEmbeddedUrl } = await import("./command/recover.js");
  const open = async () => {
    if (config.databaseUrl) return openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir, poolSize: 2 });
    const running = runningEmbeddedUrl(config.dataDir);
    if (running) {
      const db = await openDatabase({ databaseUrl: running, dataDir: config.dataDir, poolSize: 2 });
      if (
        await db.ping().then(
          () => true,
          () => false,
        )
      )
        return db;
      await db.close().catch(() => {});
    }
    return openDatabase({ dataDir: config.dataDir, poolSize: 2 });
  };
  return open().catch((err: unknown) => {
    throw databaseError(err, config) ?? err;
  });
}

/** `recover`: unlock a user and give it new credentials with database access alone (src/command/recover.ts). */
async function recover(config: Config, what: { user: string; instance?: string; newPassword: boolean }): Promise<void> {
  const { EventStore } = await import("./eventstore/eventstore.js");
  const { registerProjections } = await import("./projections/index.js");
  const { recoverUser } = await import("./command/recover.js");
  const db = await openForTool(config);
  try {
    const es = new EventStore(db);
    registerProjections(es);
    const r = await recoverUser(es, db, what);
    console.error(`recovered user ${r.userId} (${r.kind}) of instance ${r.instanceId}${r.unlocked ? ": unlocked" : ": was not locked"}`);
    // the secret alone on stdout, so that `... recover --user x > file` captures just it
    if (r.pat) {
      console.error("a new personal access token follows; it is shown once");
      console.log(r.pat);
    }
    if (r.password) {
      console.error("a new password follows (it must be changed at the next sign-in); it is shown once");
      console.log(r.password);
    }
  } finally {
    await db.close();
  }
}

/** `projections rebuild [table ...]`: the named projection tables (default all) from the event log (src/projections/rebuild.ts). */
async function rebuild(config: Config, tables: string[]): Promise<void> {
  const { allProjections } = await import("./projections/index.js");
  const { rebuildProjections } = await import("./projections/rebuild.js");
  const known = allProjections.map((p) => p.table as string);
  const unknown = tables.filter((t) => !known.includes(t));
  if (unknown.length) throw new StartupError(`no projection "${unknown.join('", "')}"; the projections are: ${known.join(", ")}`);
  const db = await openForTool(config);
  try {
    const started = performance.now();
    const r = await rebuildProjections(db, tables as (typeof allProjections)[number]["table"][]);
    for (const t of r.tables) console.log(`rebuilt ${t.table} (version ${t.version}): ${t.rows} rows`);
    console.log(`replayed ${r.events} events in ${Math.round(performance.now() - started)} ms`);
  } finally {
    await db.close();
  }
}

/** `npm start` (serve), `npm run migrate` (apply migrations and exit), `--help`. */
async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(usage());
    return;
  }
  const config = loadConfig(process.env, process.argv.slice(2));
  debug = /^(debug|trace)$/.test(config.logLevel);
  // every command that sets a password (recover too) hashes at the configured cost
  setPasswordHashCost(config.passwordHashCost);
  // Imported only now: --help and configuration errors answer without loading Prisma and the API.
  if (args.command === "migrate") {
    failing = "cannot migrate";
    const { openDatabase } = await import("./storage/database.js");
    const { migrate } = await import("./storage/migrate.js");
    try {
      const db = await openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir });
      try {
        const applied = await migrate(db);
        console.log(applied.length ? `applied ${applied.join(", ")}` : "the database is up to date");
      } finally {
        await db.close();
      }
    } catch (err) {
      throw databaseError(err, config) ?? err;
    }
    return;
  }
  if (args.command === "recover") {
    failing = "cannot recover";
    await recover(config, args.recover!);
    return;
  }
  if (args.command === "projections") {
    failing = "cannot rebuild";
    await rebuild(config, args.rebuild ?? []);
    return;
  }
  const { workerRole } = await import("./server/worker-peers.js");
  const role = workerRole();
  if (!role) await checkPort(config);
  // From here every line is the logger's (SVC_LOG_FORMAT: JSON by default, so that `npm start | jq` reads them all).
  const { createLogger, startupLogger } = await import("./server/logging.js");
  const root = createLogger({ level: config.logLevel, format: config.logFormat });
  const all = role ? root.child({ worker: role.slot }) : root;
  // The start-up and stop lines are shown at any SVC_LOG_LEVEL but silent; everything else follows the level.
  const log = startupLogger(all);
  // Node's own warnings (deprecations, experimental features) as log lines rather than plain text on stderr.
  process.removeAllListeners("warning");
  process.on("warning", (w) => all.warn({ warning: w.name, code: (w as NodeJS.ErrnoException).code }, w.message));
  if (role) return serveAsWorker(config, role, all);
  const supervisor = config.workers >= 2;
  let server: Serving | undefined;
  let stopStarting: (() => Promise<number>) | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: finishing in-flight calls");
    try {
      const code = await (server ? server.stop() : stopStarting ? stopStarting() : 0);
      log.info({ signal }, "stopped");
      process.exit(code);
    } catch (err) {
      log.error({ err }, "shutdown failed");
      process.exit(1);
    }
  };
  const handleSignals = () => {
    process.on("SIGTERM", () => void stop("SIGTERM"));
    process.on("SIGINT", () => void stop("SIGINT"));
  };
  // A supervisor handles signals from its first moment (src/server/workers.ts); one process, once it serves
  // and before the ready line: whoever reads it may signal at once, and an unhandled SIGTERM kills outright.
  if (supervisor) handleSignals();
  server = supervisor ? await supervise(config, log, (s) => (stopStarting = s)) : await serveAlone(config, all);
  if (!supervisor) handleSignals();
  // Paths and the URL end at a space: whoever reads them from a line (scripts, the tests) takes them up to there.
  if (server.firstInstance) {
    const pat = config.firstInstancePatPath;
    log.info({ patFile: pat }, `first start: created the first instance; the IAM_OWNER service user's PAT is in ${pat} (mode 0600)`);
    const passwordFile = server.firstInstance.passwordFile;
    if (passwordFile) {
      const user = config.firstInstanceAdminUsername;
      log.info(
        { passwordFile, username: user },
        `first start: the password of ${user} was generated into ${passwordFile} (it must be changed at the first sign-in)`,
      );
    }
  }
  const workers = config.workers >= 2 ? `, ${config.workers} workers` : "";
  log.info({ url: server.url, workers: config.workers }, `svc IAM listening on ${server.url} (REST, gRPC, Connect, OIDC and the login UI${workers})`);
}

/** A server as main runs it: one process, or a supervisor of workers (src/server/workers.ts). */
interface Serving {
  url: string;
  /** The start created the first instance; where the first admin's generated password is, if any. */
  firstInstance?: { passwordFile?: string | undefined } | undefined;
  /** Finishes the calls in flight; resolves with the exit code. */
  stop(): Promise<number>;
}

async function serveAlone(config: Config, log: Logger): Promise<Serving> {
  const { startServer } = await import("./server/app.js");
  const server = await startServer(config, { log }).catch((err: unknown) => {
    throw startError(err, config);
  });
  const { created, passwordFile } = server.firstInstance;
  return { url: server.url, firstInstance: created ? { passwordFile } : undefined, stop: () => server.close().then(() => 0) };
}

async function supervise(config: Config, log: Logger, onStoppable: (stop: () => Promise<number>) => void): Promise<Serving> {
  const { superviseWorkers } = await import("./server/workers.js");
  return superviseWorkers(config, log, (code) => process.exit(code), onStoppable).catch((err: unknown) => {
    throw startError(err, config);
  });
}

/**
 * A worker of the supervisor: serves until told to drain (or signalled: a terminal's Ctrl-C reaches the whole
 * process group), then exits. Its start-up failure goes to the supervisor as the one line it prints.
 */
async function serveAsWorker(config: Config, role: WorkerRole, log: Logger): Promise<void> {
  const { startServer } = await import("./server/app.js");
  const { WorkerPeers } = await import("./server/worker-peers.js");
  const tell = (m: WorkerMessage) => new Promise<void>((resolve) => (process.send ? process.send(m, undefined, {}, () => resolve()) : resolve()));
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // still starting: it has answered nothing yet, and a set-up cut short is done again by the next start
    if (!server) process.exit(0);
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("message", (m: WorkerMessage) => m.t === "drain" && stop());
  try {
    server = await startServer(config, { log, peers: new WorkerPeers(role) });
  } catch (err) {
    await tell({ t: "failed", line: oneLine(startError(err, config)) });
    process.exit(1);
  }
  const { created, passwordFile } = server.firstInstance;
  await tell({ t: "ready", url: server.url, ...(created ? { firstInstance: { passwordFile } } : {}) });
}

/** A start-up error in words naming the setting at fault (the port, DATABASE_URL), else as thrown. */
function startError(err: unknown, config: Config): unknown {
  const listen = (err as NodeJS.ErrnoException).syscall === "listen" ? listenError(err, config.port, config.host) : undefined;
  return listen ?? databaseError(err, config) ?? err;
}

/**
 * Every start-up failure is one line on stderr and exit code 1, so that it reads well in a terminal, a
 * container log or systemd's journal. Expected failures (StartupError, ConfigError) are their message;
 * anything else is a bug or an environment problem nobody anticipated: its message on one line, and its
 * stack only with SVC_LOG_LEVEL=debug.
 */
function oneLine(err: unknown): string {
  if (err instanceof ConfigError) return `configuration: ${err.message}`;
  if (err instanceof StartupError) return `${failing}: ${err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  const flat = message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");
  return `${failing}: ${flat || (err as Error)?.name || "unknown error"} (SVC_LOG_LEVEL=debug shows the stack)`;
}

main().catch((err: unknown) => {
  if (debug && !(err instanceof StartupError)) console.error(err);
  else console.error(oneLine(err).replace(/\s*\n\s*/g, " "));
  process.exit(1);
});
