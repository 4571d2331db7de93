// What metrics cost (issue 12, goal: metrics on >= 0.97 of the throughput with metrics off): ResolveLanguages
// over REST on two servers of the same run, one with SVC_METRICS=on (the default), one with off, each on its
// own embedded database. Both are loaded at the same time, round after round, after a warm-up: on a shared
// machine the neighbours' load swings throughput by a factor of two within seconds, and loaded together both
// sides meet the same swings while the scheduler gives each process the same share of CPU, so the cheaper side
// serves more. Printed: the median of the rounds' ratios, the ratio of the summed counts, and each server's
// CPU time per request (its processes, from /proc, Linux). Beside it, what recording one request costs in this
// process (no network, no noise to speak of), against that CPU time per request.
// Both servers run BENCH_WORKERS workers (SVC_WORKERS, default 1).
// Part of `npm run bench` (BENCH_SECTIONS=metrics); alone: node --import tsx bench/metrics.ts (BENCH_SECONDS, default 3).
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Metrics } from "../src/observability/metrics.js";
import { serverCpuSeconds } from "./cpu.js";
import { httpLoad, startProcess, type Result } from "./load.js";
import { benchWorkers } from "./server.js";

type Label = "on" | "off";

interface Side {
  label: Label;
  dir: string;
  child: ChildProcess;
  url: string;
  pat: string;
}

async function start(label: Label, workers: number): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-metrics-${label}-`));
  // An OTEL_* variable in the bench's environment would turn tracing on for both sides: this measures metrics alone.
  const env = { SVC_PORT: "0", SVC_DATA_DIR: dir, SVC_LOG_LEVEL: "warn", SVC_METRICS: label, OTEL_SDK_DISABLED: "true", SVC_WORKERS: String(workers) };
  const p = await startProcess(["src/main.ts"], env, /listening on (http:\/\/\S+)/);
  return { label, dir, child: p.child, url: p.url, pat: readFileSync(join(dir, "admin.pat"), "utf8").trim() };
}

async function stop(side: Side): Promise<void> {
  const exited = new Promise((r) => side.child.once("exit", r));
  side.child.kill("SIGTERM");
  await exited;
  rmSync(side.dir, { recursive: true, force: true });
}

/** CPU time (user + system) of a server so far in ms (its workers with it), or undefined where /proc is not there. */
function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined;
  return serverCpuSeconds(pid) * 1000;
}

/** Nanoseconds of CPU that recording one request's count and duration takes (the metrics' part of the per-request hook). */
function recordingNs(): number {
  const record = new Metrics().rpc("svc.settings.language.v3alpha.LanguageSettingsService", "ResolveLanguages", "rest");
  const n = 1_000_000;
  for (let i = 0; i < 100_000; i++) record(0.001, "OK");
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) record(0.0003 + (i % 100) * 0.0001, "OK");
  const t = process.cpuUsage(t0);
  return ((t.user + t.system) * 1000) / n;
}

/**
 * What a Prometheus scrape waits for: 50 scrapes of /metrics one after another on the idle server, after the load
 * filled its series. With workers the supervisor asks each of them and merges their answers (prom-client's
 * cluster registry), which is what this shows beside a single process.
 */
async function scrapeTime(url: string, workers: number): Promise<string> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    bytes = (await (await fetch(`${url}/metrics`)).text()).length;
    times.push(performance.now() - t0);
  }
  const sorted = [...times].sort((a, b) => a - b);
  return `/metrics scrape, ${workers} worker(s), idle: p50 ${median(times).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms, ${bytes} bytes`;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** `workers`: SVC_WORKERS of both servers. `ratio`: the median of the rounds' on / off throughput (the goal's figure). */
export async function metricsBench(seconds: number, workers = benchWorkers(), rounds = 5): Promise<{ results: Result[]; ratios: string[]; ratio: number }> {
  const [on, off] = await Promise.all([start("on", workers), start("off", workers)]);
  try {
    if ((await fetch(`${on.url}/metrics`)).status !== 200) throw new Error("metrics on: /metrics is not served");
    if ((await fetch(`${off.url}/metrics`)).status !== 404) throw new Error("metrics off: /metrics is served");
    const load = (side: Side, duration: number) =>
      httpLoad(`ResolveLanguages REST, metrics ${side.label}`, {
        url: `${side.url}/settings/v3alpha/languages`,
        headers: { authorization: `Bearer ${side.pat}` },
        duration,
      });
    // JIT and caches warm: the first seconds of a fresh process are slower.
    await Promise.all([load(on, Math.max(2, seconds)), load(off, Math.max(2, seconds))]);
    const runs: Record<Label, Result[]> = { on: [], off: [] };
    const cpu: Record<Label, number> = { on: 0, off: 0 };
    let cpuKnown = true;
    for (let round = 0; round < rounds; round++) {
      const before = [cpuMs(on.child.pid), cpuMs(off.child.pid)];
      // Which side's load starts first alternates, so that neither has the first connections every round.
      const [a, b] =
        round % 2
          ? await Promise.all([load(off, seconds), load(on, seconds)]).then(([offRun, onRun]) => [onRun, offRun] as const)
          : await Promise.all([load(on, seconds), load(off, seconds)]);
      const after = [cpuMs(on.child.pid), cpuMs(off.child.pid)];
      runs.on.push(a);
      runs.off.push(b);
      if (before.some((x) => x === undefined) || after.some((x) => x === undefined)) cpuKnown = false;
      else {
        cpu.on += after[0]! - before[0]!;
        cpu.off += after[1]! - before[1]!;
      }
    }
    const requests = (label: Label) => runs[label].reduce((n, r) => n + r.rps * seconds, 0);
    const merged = (label: Label): Result => ({
      name: runs[label][0]!.name,
      rps: requests(label) / (seconds * rounds),
      p50: median(runs[label].map((r) => r.p50)),
      p99: median(runs[label].map((r) => r.p99)),
      errors: runs[label].reduce((n, r) => n + r.errors, 0),
    });
    const perRound = runs.on.map((r, i) => r.rps / runs.off[i]!.rps);
    const cpuUs = { on: (cpu.on * 1000) / requests("on"), off: (cpu.off * 1000) / requests("off") };
    const ns = recordingNs();
    const ratios = [
      `metrics on / off, ResolveLanguages REST, both loaded at once: median of ${rounds} rounds ${median(perRound).toFixed(3)}, ` +
        `summed ${(requests("on") / requests("off")).toFixed(3)} (goal >= 0.97; rounds ${perRound.map((x) => x.toFixed(2)).join(" ")})`,
    ];
    if (cpuKnown) {
      ratios.push(
        `metrics on / off, server CPU per request: ${cpuUs.on.toFixed(0)} vs ${cpuUs.off.toFixed(0)} µs, off / on = ${(cpuUs.off / cpuUs.on).toFixed(3)}; ` +
          `recording a request costs ${ns.toFixed(0)} ns in process, ${((ns / 1000 / cpuUs.off) * 100).toFixed(2)} % of the CPU per request`,
      );
    }
    ratios.push(await scrapeTime(on.url, workers));
    return { results: [merged("on"), merged("off")], ratios, ratio: median(perRound) };
  } finally {
    await Promise.all([stop(on), stop(off)]);
  }
}

if (process.argv[1]?.endsWith("bench/metrics.ts")) {
  const { results, ratios } = await metricsBench(Number(process.env.BENCH_SECONDS ?? 3));
  for (const r of results) console.log(`${r.name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${r.errors}`);
  console.log(ratios.join("\n"));
}
