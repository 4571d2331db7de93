// The same handler over gRPC and over REST, driven by h2load (nghttp2's load generator, in C) so that the
// client does not eat the cores the server runs on; compared by the server's own CPU per call (its processes: bench/cpu.ts).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { abortBench } from "./abort.js";
import { serverCpuSeconds } from "./cpu.js";
import type { Result } from "./load.js";

interface H2Run {
  rps: number;
  done: number;
  failed: number;
  cpuMsPerCall: number;
  p50: number;
}

function h2load(args: string[], url: string, pid: number): H2Run {
  const before = serverCpuSeconds(pid);
  const r = spawnSync("h2load", [...args, url], { encoding: "utf8" });
  const cpu = serverCpuSeconds(pid) - before;
  const rps = Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(r.stdout)?.[1] ?? Number.NaN);
  const m = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed/.exec(r.stdout);
  if (r.status !== 0 || !m) throw new Error(`h2load failed: ${r.stderr || r.stdout}`);
  const done = Number(m[1]);
  // h2load's "time for request" line: min, max, mean, sd; the mean stands in for p50 here.
  const mean = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/.exec(r.stdout);
  const p50 = mean ? Number(mean[1]) * (mean[2] === "us" ? 0.001 : mean[2] === "s" ? 1000 : 1) : Number.NaN;
  return { rps, done, failed: Number(m[3]), cpuMsPerCall: (cpu * 1000) / Math.max(1, done), p50 };
}

export function h2loadAvailable(): boolean {
  return spawnSync("h2load", ["--version"]).status === 0;
}

/** `cpuMsPerCall`: the server's CPU per call of ResolveLanguages over gRPC and over REST (HTTP/1.1), when h2load ran. */
export function protocolsBench(a: { url: string; pid: number; pat: string; seconds: number }): {
  results: Result[];
  ratios: string[];
  cpuMsPerCall?: { grpc: number; rest: number };
} {
  if (!h2loadAvailable()) return { results: [], ratios: ["gRPC vs REST: skipped (install Debian's nghttp2-client for h2load)"] };
  const dir = mkdtempSync(join(tmpdir(), "svc-h2load-"));
  try {
    // A gRPC message frame: not compressed, length 0 (ResolveLanguagesRequest has no fields set).
    const frame = join(dir, "grpc-request");
    writeFileSync(frame, Buffer.alloc(5));
    const auth = ["-H", `authorization: Bearer ${a.pat}`];
    const duration = ["-D", String(a.seconds)];
    // gRPC clients multiplex one connection; REST clients open several HTTP/1.1 connections.
    const grpc = h2load(
      ["-c", "1", "-m", "50", ...duration, ...auth, "-d", frame, "-H", "content-type: application/grpc", "-H", "te: trailers"],
      `${a.url}/svc.settings.language.v3alpha.LanguageSettingsService/ResolveLanguages`,
      a.pid,
    );
    const rest = h2load(["--h1", "-c", "50", ...duration, ...auth], `${a.url}/settings/v3alpha/languages`, a.pid);
    // gRPC-web, as browsers send it: HTTP/1.1 connections, the status in a trailer frame of the body.
    const grpcWeb = h2load(
      ["--h1", "-c", "50", ...duration, ...auth, "-d", frame, "-H", "content-type: application/grpc-web+proto", "-H", "x-grpc-web: 1"],
      `${a.url}/svc.settings.language.v3alpha.LanguageSettingsService/ResolveLanguages`,
      a.pid,
    );
    // REST on one HTTP/2 connection, as the gRPC run: what Node's HTTP/2 layer itself costs per call.
    const restH2 = h2load(["-c", "1", "-m", "50", ...duration, ...auth], `${a.url}/settings/v3alpha/languages`, a.pid);
    const results: Result[] = [
      { name: "ResolveLanguages gRPC (h2load)", rps: grpc.rps, p50: grpc.p50, p99: Number.NaN, errors: grpc.failed },
      { name: "ResolveLanguages REST (h2load)", rps: rest.rps, p50: rest.p50, p99: Number.NaN, errors: rest.failed },
      { name: "ResolveLanguages REST over HTTP/2 (h2load)", rps: restH2.rps, p50: restH2.p50, p99: Number.NaN, errors: restH2.failed },
      { name: "ResolveLanguages gRPC-web (h2load)", rps: grpcWeb.rps, p50: grpcWeb.p50, p99: Number.NaN, errors: grpcWeb.failed },
    ];
    const ratios = [
      `server CPU per call: gRPC ${grpc.cpuMsPerCall.toFixed(3)} ms, REST ${rest.cpuMsPerCall.toFixed(3)} ms, gRPC / REST = ${(grpc.cpuMsPerCall / rest.cpuMsPerCall).toFixed(2)} (goal <= 1.2)`,
      `server CPU per call: gRPC-web ${grpcWeb.cpuMsPerCall.toFixed(3)} ms, gRPC-web / REST = ${(grpcWeb.cpuMsPerCall / rest.cpuMsPerCall).toFixed(2)} (both HTTP/1.1)`,
      `server CPU per call, both on one HTTP/2 connection: REST ${restH2.cpuMsPerCall.toFixed(3)} ms, gRPC / REST over HTTP/2 = ${(grpc.cpuMsPerCall / restH2.cpuMsPerCall).toFixed(2)}`,
      ...abortBench(rest.cpuMsPerCall),
    ];
    return { results, ratios, cpuMsPerCall: { grpc: grpc.cpuMsPerCall, rest: rest.cpuMsPerCall } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
