import { ConfigError, loadConfig } from "./config/config.js";
import { migrate } from "./storage/migrate.js";
import { openDatabase } from "./storage/database.js";
import { startServer } from "./server/app.js";

/** `npm start` (serve) and `npm run migrate` (apply migrations and exit). */
async function main() {
  const config = loadConfig();
  if (process.argv.includes("migrate")) {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const applied = await migrate(db);
    await db.close();
    console.log(applied.length ? `applied ${applied.join(", ")}` : "the database is up to date");
    return;
  }
  const server = await startServer(config);
  if (server.firstInstance.created) {
    console.log(`first start: created the first instance; the IAM_OWNER service user's PAT is in ${config.firstInstancePatPath}`);
  }
  console.log(`svc IAM listening on ${server.url}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, "shutting down: finishing in-flight calls");
    try {
      await server.close();
      process.exit(0);
    } catch (err) {
      console.error("shutdown failed", err);
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? `configuration: ${err.message}` : err);
  process.exit(1);
});
