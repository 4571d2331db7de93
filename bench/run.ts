// npm run bench: ResolveLanguages and SetLanguages over REST and gRPC against the same run's ceiling (a bare
// Fastify route returning the same JSON). Server and ceiling run in their own processes; figures are ratios
// because absolute numbers drift between runs.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  ResolveLanguageSettingsRequestSchema,
  SetLanguageSettingsRequestSchema,
} from "../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { grpcLoad, httpLoad, startProcess, type Result } from "./load.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
const server = await startProcess(["src/main.ts"], { SVC_PORT: "0", SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: "warn", }, /listening on (http:\/\/\S+)/);
const pat = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
const auth = { authorization: `Bearer ${pat}` };
const sample = await (await fetch(`${server.url}/settings/v3alpha/languages`, { headers: auth })).text();
const ceiling = await startProcess(["bench/ceiling.ts"], { CEILING_BODY: sample }, /listening on (http:\/\/\S+)/);
const target = new URL(server.url).host;
const svc = "/svc.settings.language.v3alpha.LanguageSettingsService";
// Consecutive writes cycle through the supported languages, so (nearly) every write is a real change.
const keys = ["de", "fr", "it", "es", "ja", "pl", "pt", "ru", "zh", "en"];
let next = 0;

const results: Result[] = [];
try {
  const ceil = await httpLoad("ceiling: bare Fastify GET, same JSON", { url: `${ceiling.url}/settings/v3alpha/languages`, duration: seconds });
  results.push(ceil);
  results.push(await httpLoad("ResolveLanguages REST", { url: `${server.url}/settings/v3alpha/languages`, headers: auth, duration: seconds }));
  const resolveReq = Buffer.from(toBinary(ResolveLanguageSettingsRequestSchema, create(ResolveLanguageSettingsRequestSchema, {})));
  results.push(await grpcLoad("ResolveLanguages gRPC", target, `${svc}/ResolveLanguages`, () => resolveReq, pat, seconds));
  // Every SetLanguages changes the value, so each call appends an event and updates the projection.
  results.push(
    await httpLoad("SetLanguages REST (a write each)", {
      url: `${server.url}/settings/v3alpha/languages`,
      method: "PATCH",
      headers: { ...auth, "content-type": "application/json" },
      requests: [{ method: "PATCH", setupRequest: (req) => ({ ...req, body: JSON.stringify({ defaultLanguage: { key: keys[next++ % keys.length] } }) }) }],
      duration: seconds,
    }),
  );
  const setReqs = keys.map((key) => Buffer.from(toBinary(SetLanguageSettingsRequestSchema, create(SetLanguageSettingsRequestSchema, { settings: { defaultLanguage: { key } } }))));
  results.push(await grpcLoad("SetLanguages gRPC (a write each)", target, `${svc}/SetLanguages`, () => setReqs[next++ % setReqs.length]!, pat, seconds));

  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`\n${pad("benchmark (50 concurrent, " + seconds + " s each)", 44)} ${pad("req/s", 9)} ${pad("p50 ms", 8)} ${pad("p99 ms", 8)} ${pad("errors", 7)} vs ceiling`);
  for (const r of results) {
    console.log(
      `${pad(r.name, 44)} ${pad(r.rps.toFixed(0), 9)} ${pad(r.p50.toFixed(2), 8)} ${pad(r.p99.toFixed(2), 8)} ${pad(String(r.errors), 7)} ${(r.rps / ceil.rps).toFixed(3)}`,
    );
  }
} finally {
  server.child.kill("SIGTERM");
  ceiling.child.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dataDir, { recursive: true, force: true });
}
