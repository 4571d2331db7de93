import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { projectRoot } from "../../src/storage/paths.js";

let built: Promise<string> | undefined;

/**
 * The admin console built from this checkout's console/ (as `npm run build` makes it) into a folder of this test
 * process, once: the suite's servers run from src/ and are given it (StartOptions.consoleDir).
 */
export function consoleBuild(): Promise<string> {
  built ??= (async () => {
    const outDir = mkdtempSync(join(tmpdir(), "svc-console-"));
    await build({ configFile: join(projectRoot, "console", "vite.config.ts"), logLevel: "warn", build: { outDir, emptyOutDir: true } });
    return outDir;
  })();
  return built;
}
