/**
 * An expected reason why the process cannot start (or migrate): bad configuration, a busy port, an
 * unreachable database, a master key that does not open the stored secrets, a data directory in use.
 * `src/main.ts` prints its message as one line on stderr (no stack) and exits with code 1, so the message
 * must name what to change (the variable, file or address) and what is wrong, on one line.
 * Anything else that escapes start-up is treated as a bug (its stack is shown with SVC_LOG_LEVEL=debug).
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StartupError";
  }
}

/** A configuration value (environment, `--config` file or command line) that cannot be used; printed as "configuration: ...". */
export class ConfigError extends StartupError {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
