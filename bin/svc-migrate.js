#!/usr/bin/env node
// `npx svc-migrate keycloak ...`: the compiled scripts/svc-migrate.ts (dist/scripts/svc-migrate.js), built first
// when dist/ is missing or stale, like bin/svc.js.
import { ensureBuilt } from "../scripts/build.mjs";

try {
  ensureBuilt();
} catch (err) {
  process.stderr.write(`svc-migrate: ${err.message}\n`);
  process.exit(1);
}
await import("../dist/scripts/svc-migrate.js");
