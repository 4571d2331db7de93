import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/storage/paths.js";

/**
 * The layers of docs/architecture.md: a module may import its own layer's modules and those of layers below
 * it, never above; sibling layers of one rank (api, oidc, login) do not import each other. The cross-cutting
 * layer sits between the request layers and command.
 */
const rank: Record<string, number> = {
  server: 0,
  api: 1,
  oidc: 1,
  login: 1,
  // What the login UI and the OIDC provider's pages share: HTML, texts, the browser's cookies.
  web: 1.5,
  // The HTTP edge of JSON routes that are not RPCs' own (the REST gateway's, the older admin APIs'): body reading, status objects.
  http: 1.5,
  // The protocols of external identity providers (OIDC, OAuth, LDAP, SAML): the login UI and the intents API use them.
  federation: 2,
  // Executions run after authorization and validation, and use both.
  actions: 2,
  // Messages out (mail, SMS): the notification providers' senders, the worker; the API's _test RPCs and the login use them.
  notification: 1.8,
  authz: 2.5,
  validation: 2.5,
  command: 3,
  query: 4,
  // One module per projection table: the handlers that write it, from the events; query derives its cache sources from them.
  projections: 4.2,
  // The event definitions: commands append them, projections reduce them, the log's readers read them.
  events: 4.5,
  eventstore: 5,
  storage: 6,
  // Outbound HTTP and DNS to addresses users chose (execution targets, domain validation), under the address policy.
  net: 6.5,
  // Leaves every layer may use: errors, crypto, configuration, identifiers, what the protos declare.
  schema: 7,
  errors: 7,
  crypto: 7,
  config: 7,
  domain: 7,
  "ids.ts": 7,
  // Metrics and tracing: they know no request, event or table; the server layer feeds them (server/observe.ts).
  observability: 7,
  "main.ts": -1,
};

const src = join(projectRoot, "src");

function layerOf(file: string): string {
  return relative(src, file).split("/")[0]!.replace(/\.js$/, ".ts");
}

function* sourceFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* sourceFiles(path);
    else if (e.name.endsWith(".ts")) yield path;
  }
}

/** Every import of the source tree against the direction of the layers, as "from -> to". */
function importsAgainstLayers(): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(src)) {
    const from = layerOf(file);
    const text = readFileSync(file, "utf8");
    // Static imports and re-exports, side-effect imports and dynamic imports.
    const specifiers = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"|(?:^|\n)\s*import\s+"(\.[^"]+)"|\bimport\(\s*"(\.[^"]+)"\s*\)/g;
    for (const m of text.matchAll(specifiers)) {
      const target = resolve(dirname(file), (m[1] ?? m[2] ?? m[3])!);
      if (!target.startsWith(`${src}/`)) continue;
      const to = layerOf(target);
      if (to === from) continue;
      const [a, b] = [rank[from], rank[to]];
      if (a === undefined || b === undefined) out.push(`${relative(src, file)} -> ${relative(src, target)} (layer not in the table)`);
      else if (b <= a && !(b === 7 && a === 7)) out.push(`${relative(src, file)} -> ${relative(src, target).replace(/\.js$/, ".ts")}`);
    }
  }
  return out.sort();
}

/**
 * The layers that talk to the database; every other layer reads through query/ and writes through command/
 * (whose events' projections/ write the projection tables).
 */
const databaseLayers = new Set(["query", "command", "projections", "storage", "eventstore"]);

/** A Prisma delegate's call (`db.prisma.user.findMany(`, `tx.user.update(`), raw SQL, or a transaction of its own. */
const databaseCall =
  /\b(?:prisma|tx)\.\w+\.(?:find\w*|count|aggregate|groupBy|create\w*|update\w*|upsert|delete\w*)\(|\$(?:queryRaw|executeRaw|transaction)\w*\b|\bsql\.query\(/;

/** Lines matching `pattern` in the files of the given layers, as "file:line: text". */
function linesMatching(pattern: RegExp, inLayer: (layer: string) => boolean): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(src)) {
    if (!inLayer(layerOf(file))) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (!/^\s*(?:\/\/|\*)/.test(line) && pattern.test(line)) out.push(`${relative(src, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  return out;
}

describe("layers", () => {
  it("no module imports a layer above its own, or a sibling request layer", () => {
    expect(importsAgainstLayers()).toEqual([]);
  });

  it("only query/, command/, projections/, storage/ and eventstore/ call the database", () => {
    expect(linesMatching(databaseCall, (layer) => !databaseLayers.has(layer))).toEqual([]);
  });

  it("query/ speaks domain types: no API message (gen/svc) is imported there", () => {
    expect(linesMatching(/from\s+"(?:\.\.\/)+gen\/svc\//, (layer) => layer === "query")).toEqual([]);
  });
});
