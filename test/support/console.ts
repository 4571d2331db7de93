import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { projectRoot } from "../../src/storage/paths.js";

let built: Promise<string> | undefined;

/** The start of the name of a run's console builds: the run's main process is the test processes' parent. */
export const consoleBuildPrefix = (runPid: number) => `svc-console-${runPid}-`;

/**
 * The admin console built from this checkout's console/ (as `npm run build` makes it) into a folder of this test
 * process, once: the suite's servers run from src/ and are given it (StartOptions.consoleDir).
 */
export function consoleBuild(): Promise<string> {
  built ??= (async () => {
    // Named after the run (the test processes' parent), whose teardown removes it (global-teardown.ts).
    const outDir = mkdtempSync(join(tmpdir(), `${consoleBuildPrefix(process.ppid)}`));
    await build({ configFile: join(projectRoot, "console", "vite.config.ts"), logLevel: "warn", build: { outDir, emptyOutDir: true } });
    return outDir;
  })();
  return built;
}
