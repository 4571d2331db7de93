// Prisma's schema engine as WebAssembly (an npm package), driven through the PGlite driver adapter: it
// needs no downloaded binary, so migrations can be authored and checked offline. PGlite stays here, in the
// tooling only: the engine reads catalog columns of type "char", which @prisma/adapter-pg cannot decode
// ("Column type 'char' could not be deserialized"), while the PGlite adapter can.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import * as engineModule from "@prisma/schema-engine-wasm/schema_engine_bg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { schemaPath } from "../src/storage/paths.js";

let loaded = false;
async function loadEngine(): Promise<void> {
  if (loaded) return;
  const require = createRequire(import.meta.url);
  const wasmPath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg").replace(/\.js$/, ".wasm");
  const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), { "./schema_engine_bg.js": engineModule });
  engineModule.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
  loaded = true;
}

/**
 * An empty in-memory database for the schema tooling, with the extensions the migrations create
 * (schema.prisma's `extensions`): PGlite bundles them but loads only those it is given.
 */
export function toolDatabase(): Promise<PGlite> {
  return PGlite.create({ extensions: { pg_trgm } });
}

// The migrator's own bookkeeping table is not part of the schema.
const filters = { externalTables: ["public._svc_migrations"], externalEnums: [] };

/**
 * The SQL that takes the database `client` holds to what schema.prisma describes ("" when they agree).
 * `client` defaults to an empty in-memory database, which gives the whole schema as one script.
 */
export async function diffDatabaseToSchema(client?: PGlite, schema = readFileSync(schemaPath, "utf8")): Promise<string> {
  await loadEngine();
  const db = client ?? (await toolDatabase());
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPGlite(db));
  const engine = await engineModule.SchemaEngine.new({ datamodels: [["schema.prisma", schema]] }, () => {}, adapter);
  const files = { files: [{ path: "schema.prisma", content: schema }] };
  try {
    const result = await engine.diff({
      from: { tag: "schemaDatasource", ...files, configDir: "." },
      to: { tag: "schemaDatamodel", ...files },
      script: true,
      exitCode: true,
      filters,
    });
    return result.exitCode === 0 ? "" : (result.stdout ?? "");
  } finally {
    engine.free();
    if (!client) await db.close();
  }
}
