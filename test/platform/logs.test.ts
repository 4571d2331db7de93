import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { traceIdOf } from "../../src/http/trace-id.js";
import { textLine } from "../../src/server/logging.js";
import { projectRoot } from "../../src/storage/paths.js";
import { testDb } from "../support/database.js";
import { serverArgs } from "../support/process.js";

/**
 * Issue 29, logs: `npm start | jq` reads every line. The server runs as its own process (what `npm start` runs),
 * answers a few requests and stops on SIGTERM; every line it wrote, on stdout and on stderr, is JSON (or, with
 * SVC_LOG_FORMAT=text, a line for people). One line per request with its method or RPC, status, duration, trace
 * ID and instance; probes only at debug; a progress line while the database is prepared.
 */

const dataDir = mkdtempSync(join(tmpdir(), "svc-logs-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Run {
  stdout: string[];
  stderr: string[];
  code: number | null;
}

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

/** Starts the server (serverArgs), waits for its address, sends the requests, stops it with SIGTERM; its lines, per stream. */
async function run(env: Record<string, string>): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SVC_") && k !== "DATABASE_URL"));
  const child = spawn(process.execPath, serverArgs(), {
    cwd: projectRoot,
    env: { ...clean, SVC_PORT: "0", SVC_HOST: "127.0.0.1", SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening within 90 s:\n${stdout}\n${stderr}`)), 90_000);
    const seen = () => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      seen();
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${stdout}\n${stderr}`)));
  });
  for (const probe of ["/healthz", "/readyz", "/metrics"]) await (await fetch(`${url}${probe}`)).arrayBuffer();
  const discovery = await fetch(`${url}/.well-known/openid-configuration?code=SECRETCODE9&x=1`, {
    headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
  });
  expect(discovery.status).toBe(200);
  await discovery.arrayBuffer();
  const rpc = await fetch(`${url}/grpc.health.v1.Health/Check`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  expect(rpc.status).toBe(200);
  await rpc.arrayBuffer();
  await (await fetch(`${url}/no/such/page?token=LOSTTOKEN`)).arrayBuffer();
  child.kill("SIGTERM");
  const code = await exited;
  const lines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");
  return { stdout: lines(stdout), stderr: lines(stderr), code };
}

type Entry = { level: number; time: number; msg: string; [k: string]: unknown };

describe.runIf(testDb === "embedded")("the server's log", () => {
  it("is one JSON object per line on stdout and stderr: start-up, one line per request, stop", async () => {
    const r = await run({});
    expect(r.code, [...r.stdout, ...r.stderr].join("\n")).toBe(0);
    const entries: Entry[] = [];
    for (const line of [...r.stdout, ...r.stderr]) {
      let entry: unknown;
      expect(() => (entry = JSON.parse(line)), `not JSON: ${line}`).not.toThrow();
      expect(entry, line).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
      entries.push(entry as Entry);
    }
    const msgs = entries.map((e) => e.msg);
    // the progress of the database's preparation, then the first start's files, then the address
    const preparing = msgs.indexOf("preparing the database ...");
    const ready = msgs.findIndex((m) => /^database ready in \d+ ms$/.test(m));
    expect(preparing).toBeGreaterThanOrEqual(0);
    expect(ready).toBeGreaterThan(preparing);
    expect(entries[ready]!.ms).toEqual(expect.any(Number));
    expect(entries.find((e) => e.msg.startsWith("first start: created the first instance"))).toMatchObject({ patFile: join(dataDir, "admin.pat") });
    expect(entries.find((e) => e.msg.startsWith("first start: the password of"))).toMatchObject({ passwordFile: join(dataDir, "admin.password") });
    const listening = entries.findIndex((e) => e.msg.startsWith("svc IAM listening on http://127.0.0.1:"));
    expect(listening).toBeGreaterThan(ready);
    expect(msgs).toContain("shutting down: finishing in-flight calls");

    // one line per request, none for the probes at info, none of Fastify's own request lines
    const requests = entries.filter((e) => "status" in e && "path" in e);
    const paths = ["/.well-known/openid-configuration", "/grpc.health.v1.Health/Check", "/no/such/page"];
    // (several workers, SVC_WORKERS defaulting to the cores, write their lines in the order they finish)
    expect(requests.map((e) => e.path).sort()).toEqual(paths);
    expect(msgs.filter((m) => /incoming request|request completed|not found/.test(m))).toEqual([]);
    const [oidc, health, missing] = paths.map((p) => requests.find((e) => e.path === p));
    expect(oidc).toMatchObject({
      level: 30,
      method: "GET",
      status: 200,
      traceId: TRACE_ID,
      instanceId: expect.stringMatching(/^\d+$/),
      reqId: expect.any(String),
    });
    expect(oidc!.ms).toEqual(expect.any(Number));
    expect(oidc!.msg).toMatch(/^GET \/\.well-known\/openid-configuration 200 [\d.]+ ms$/);
    expect(health).toMatchObject({ method: "POST", rpc: "/grpc.health.v1.Health/Check", protocol: "connect", status: 200, code: "OK" });
    expect(health!.msg).toMatch(/^\/grpc\.health\.v1\.Health\/Check 200 [\d.]+ ms$/);
    // without a caller's trace, a request begins its own
    expect(health!.traceId).toMatch(/^[\da-f]{32}$/);
    expect(health!.traceId).not.toBe(TRACE_ID);
    expect(missing).toMatchObject({ method: "GET", status: 404 });
    // the query's secrets are not in the log
    const all = [...r.stdout, ...r.stderr].join("\n");
    for (const secret of ["SECRETCODE9", "LOSTTOKEN"]) expect(all).not.toContain(secret);
  }, 180_000);

  it("with SVC_LOG_FORMAT=text, is one line for people per entry: time, level, message, fields", async () => {
    const r = await run({ SVC_LOG_FORMAT: "text" });
    expect(r.code, [...r.stdout, ...r.stderr].join("\n")).toBe(0);
    for (const line of [...r.stdout, ...r.stderr]) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/);
    const text = r.stdout.join("\n");
    // a second start: the database exists, only how long it took is said
    expect(text).not.toMatch(/preparing the database/);
    expect(text).toMatch(/ INFO {2}database ready in \d+ ms (worker=\d+ )?ms=\d+$/m);
    expect(text).toMatch(/ INFO {2}svc IAM listening on http:\/\/127\.0\.0\.1:\d+ /);
    expect(text).toMatch(new RegExp(` INFO  GET /\\.well-known/openid-configuration 200 [\\d.]+ ms .*traceId=${TRACE_ID}`));
    expect(text).not.toMatch(/healthz|readyz|\/metrics/);
  }, 180_000);
});

describe("log formatting", () => {
  it("SVC_LOG_FORMAT is json (default) or text, anything else refused naming it", () => {
    expect(loadConfig({}, []).logFormat).toBe("json");
    expect(loadConfig({ SVC_LOG_FORMAT: "text" }, []).logFormat).toBe("text");
    expect(() => loadConfig({ SVC_LOG_FORMAT: "pretty" }, [])).toThrow(ConfigError);
    expect(() => loadConfig({ SVC_LOG_FORMAT: "pretty" }, [])).toThrow(/SVC_LOG_FORMAT must be json or text/);
  });

  it("a text line keeps every field on one line; the trace ID is the traceparent's", () => {
    const line = textLine(JSON.stringify({ level: 40, time: 0, pid: 1, hostname: "h", msg: "two\nlines", reason: "a b", n: 3, ok: true, o: { x: 1 } }));
    expect(line).toBe('1970-01-01T00:00:00.000Z WARN  two\\nlines reason="a b" n=3 ok=true o={"x":1}\n');
    expect(traceIdOf(`00-${TRACE_ID}-00f067aa0ba902b7-01`)).toBe(TRACE_ID);
    expect(traceIdOf("00-00000000000000000000000000000000-00f067aa0ba902b7-01")).toBeUndefined();
    expect(traceIdOf("garbage")).toBeUndefined();
  });
});
