#!/usr/bin/env node
// `npx svc [start|migrate|recover|--help]`, and what `npm start` and `npm run migrate` run: the compiled server
// (dist/src/main.js) in this very process, so that SIGTERM reaches it; dist/ is built first when it is missing or
// older than its sources (scripts/build.mjs, docs/drafts/build.md). The arguments are main's (src/config/cli.ts).
import { ensureBuilt } from "../scripts/build.mjs";

try {
  ensureBuilt();
} catch (err) {
  process.stderr.write(`svc: ${err.message}\n`);
  process.exit(1);
}
await import("../dist/src/main.js");
