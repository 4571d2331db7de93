#!/usr/bin/env -S node --wasm-tiering-budget=180000000
// The one V8 flag of the server (docs/decisions.md, "Build: Start time and idle memory"): Prisma's query compiler
// is WebAssembly, and V8 optimises its functions that ran a little, at start-up too, where nothing runs twice;
// a larger tiering budget leaves that to the functions that stay busy (idle 169 instead of about 215 MB PSS,
// no throughput measured lost). npm start, npm run migrate, npx svc and the container run this file.
// `npx svc [start|migrate|recover|--help]`, and what `npm start` and `npm run migrate` run: the compiled server
// (dist/src/main.js) in this very process, so that SIGTERM reaches it; dist/ is built first when it is missing or
// was built from other sources (scripts/build.mjs; docs/decisions.md, "Build: When `npm start` builds"). The
// arguments are main's (src/config/cli.ts).
import { ensureBuilt } from "../scripts/build.mjs";

try {
  ensureBuilt();
} catch (err) {
  process.stderr.write(`svc: ${err.message}\n`);
  process.exit(1);
}
await import("../dist/src/main.js");
