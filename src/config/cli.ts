import { ConfigError } from "./startup-error.js";
import { describeVariables, wrap } from "./variables.js";

export type Command = "start" | "migrate" | "recover" | "projections";

export interface Args {
  command: Command;
  /** The file given with `--config`, if any. */
  configFile: string | undefined;
  help: boolean;
  /** `recover`: the user to unlock (login name or ID), the instance (ID or domain; default the first), a new password. */
  recover?: { user: string; instance?: string; newPassword: boolean };
  /** `projections rebuild [table ...]`: the tables named (none: every projection). */
  rebuild?: string[];
}

const COMMANDS: Record<Command, string> = {
  start: "serve every protocol on SVC_PORT (the default command)",
  migrate: "apply pending database migrations and exit",
  recover:
    "operator recovery with database access, no token: --user <login name|id> [--instance <id|domain>] [--new-password]; " +
    "unlocks the user, gives a service user a new PAT, with --new-password a human user a generated one (printed)",
  projections:
    "rebuild [<table> ...]: rebuild projection tables (default all) from the event log, on a running system too; " +
    "writes that arrive meanwhile wait for it and are kept",
};

const HINT = "run with --help for usage";

/** The command line after `svc` (`node dist/src/main.js`, `node --import tsx src/main.ts`). Strict: an argument nobody reads is a mistake worth a clear error. */
export function parseArgs(argv: readonly string[]): Args {
  const args: Args = { command: "start", configFile: undefined, help: false };
  let command: string | undefined;
  const recover: { user?: string; instance?: string; newPassword?: boolean } = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-h" || a === "--help") {
      args.help = true;
    } else if (a === "--config" || a.startsWith("--config=")) {
      const file = a === "--config" ? argv[++i] : a.slice("--config=".length);
      if (!file || file.startsWith("-")) throw new ConfigError(`--config needs a file name, e.g. --config svc.yaml; ${HINT}`);
      if (args.configFile !== undefined) throw new ConfigError(`--config is given twice ("${args.configFile}" and "${file}")`);
      args.configFile = file;
    } else if (a === "--user" || a === "--instance") {
      const value = argv[++i];
      if (!value || value.startsWith("-")) throw new ConfigError(`${a} needs a value; ${HINT}`);
      recover[a.slice(2) as "user" | "instance"] = value;
    } else if (a === "--new-password") {
      recover.newPassword = true;
    } else if (Object.hasOwn(COMMANDS, a) && command === undefined) {
      command = a;
      if (a === "projections") {
        if (argv[i + 1] !== "rebuild") throw new ConfigError(`projections needs a subcommand: projections rebuild [<table> ...]; ${HINT}`);
        i++;
        args.rebuild = [];
        while (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("-")) args.rebuild.push(argv[++i]!);
      }
    } else if (Object.hasOwn(COMMANDS, a)) {
      throw new ConfigError(`one command at most, got "${command}" and "${a}"; ${HINT}`);
    } else {
      throw new ConfigError(`unknown ${a.startsWith("-") ? "option" : "argument"} "${a}"; ${HINT}`);
    }
  }
  if (command) args.command = command as Command;
  if (args.command === "recover") {
    if (!recover.user) throw new ConfigError(`recover needs --user <login name or user ID>; ${HINT}`);
    args.recover = { user: recover.user, newPassword: recover.newPassword ?? false, ...(recover.instance ? { instance: recover.instance } : {}) };
  } else if (Object.keys(recover).length) {
    throw new ConfigError(`--user, --instance and --new-password belong to the recover command; ${HINT}`);
  }
  return args;
}

/** The `--help` text, every line within `HELP_WIDTH` columns. */
export function usage(): string {
  const commands = Object.entries(COMMANDS).flatMap(([c, what]) => wrap(what, `  ${c.padEnd(12)}`, " ".repeat(16)));
  const option = (flags: string, what: string) => wrap(what, `  ${flags.padEnd(17)}`, " ".repeat(19));
  return [
    "Usage: npx svc [start|migrate] [--config <file.yaml>]",
    "       npx svc recover --user <login name|id> [--instance <id|domain>] [--new-password]",
    "       npx svc projections rebuild [<table> ...]",
    "       npm start [-- --config <file.yaml>]   |   npm run migrate",
    "       node dist/src/main.js [...] (after npm run build)",
    "",
    "Commands:",
    ...commands,
    "",
    "Options:",
    ...option(
      "--config <file>",
      "read variables from a YAML file; the environment wins over it. Keys are the variable names (SVC_PORT: 8080) " +
        "or nested (svc: {port: 8080}, database: {url: ...}); an unknown key is an error",
    ),
    ...option("-h, --help", "print this help and exit"),
    "",
    "Variables (environment or --config file), default, meaning:",
    describeVariables(),
    "",
  ].join("\n");
}
