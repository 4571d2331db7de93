import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout's root (the folder with package.json), wherever this file is run from. */
export const projectRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the project root");
    dir = up;
  }
  return dir;
})();

export const migrationsDir = join(projectRoot, "prisma", "migrations");
export const schemaPath = join(projectRoot, "prisma", "schema.prisma");
