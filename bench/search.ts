// Every filter and sort column of SearchUsers (100,000 users) and SearchTargets (10,000 targets) over REST at
// 10 connections: latency percentiles and the server's own CPU per page, read from /proc/<pid>/stat before and
// after each run (user + system time of every thread of the server's node processes, bench/cpu.ts; the embedded
// PostgreSQL runs in processes of its own and is not counted). Filter values are chosen so that most pages are full (100 rows);
// each row says how many rows its pages hold. Goal (issue 12): p99 < 20 ms and Node CPU <= 1 ms per page.
// With `rate` (issue 31's shape, bench/goals.ts) each case is an open loop of `rate` searches/s over the 10
// connections (autocannon's overallRate, latencies corrected for coordinated omission); with `oneRow` each case
// with full pages runs again with a limit of 1, for the server CPU of a 100-row page against a one-row page.
import { serverCpuSeconds } from "./cpu.js";
import { httpLoad } from "./load.js";

export interface SearchBenchOptions {
  api: (path: string) => string;
  headers: Record<string, string>;
  /** Seconds per case. */
  seconds: number;
  /** The server's process ID (its CPU is read from /proc). */
  pid: number;
  /** An organisation of the seed (1,000 users). */
  org: string;
  /** Searches per second per case, an open loop; without it each case is a closed loop of 10 connections. */
  rate?: number;
  /** Also runs each case with full pages at a limit of 1 (`SearchCase.oneRowCpuMs`). */
  oneRow?: boolean;
}

export interface SearchCase {
  name: string;
  rows: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Server CPU per request, ms. */
  cpuMs: number;
  /** Server CPU per request of the same search with a limit of 1, ms (`oneRow`, full pages only). */
  oneRowCpuMs?: number;
}

/** User + system CPU of the server in ms: its processes, every thread (bench/cpu.ts). */
const cpuOf = (pid: number) => serverCpuSeconds(pid) * 1000;

const text = [
  "EQUALS",
  "EQUALS_IGNORE_CASE",
  "STARTS_WITH",
  "STARTS_WITH_IGNORE_CASE",
  "CONTAINS",
  "CONTAINS_IGNORE_CASE",
  "ENDS_WITH",
  "ENDS_WITH_IGNORE_CASE",
];
const method = (m: string) => `TEXT_FILTER_METHOD_${m}`;

/** For each text filter method, a value (seed names: user-<n>, Given<n> Family<n % 997>, user-<n>@example.com, seed-<n>). */
function textCases(field: string, key: string, values: string[]): [string, object][] {
  return text.map((m, i) => [`${field} ${m.toLowerCase()}`, { filters: [{ [field]: { [key]: values[i], method: method(m) } }] }]);
}

export async function searchBench(o: SearchBenchOptions): Promise<{ cases: SearchCase[]; lines: string[] }> {
  const post = async (path: string, body: object) => {
    const r = await fetch(o.api(path), { method: "POST", headers: o.headers, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const userIds = (await post("/resources/v3alpha/users/_search", { query: { limit: 100 } })).result.map((u: any) => u.details.id);
  const targetIds = (await post("/resources/v3alpha/targets/_search", { query: { limit: 100 } })).result.map((t: any) => t.details.id);

  const users: [string, object][] = [
    ...textCases("username", "username", ["user-4242", "USER-4242", "user-42", "USER-42", "er-42", "ER-42", "42", "42"]),
    ...textCases("displayName", "displayName", [
      "Given4242 Family254",
      "given4242 family254",
      "Given42",
      "GIVEN42",
      "42 Fam",
      "42 FAM",
      "Family254",
      "FAMILY254",
    ]),
    ...textCases("email", "address", [
      "user-4242@example.com",
      "USER-4242@EXAMPLE.COM",
      "user-42",
      "USER-42",
      "r-42",
      "R-42",
      "42@example.com",
      "42@EXAMPLE.COM",
    ]),
    ["state", { filters: [{ state: { state: "USER_STATE_INITIAL" } }] }],
    ["type", { filters: [{ type: { type: "USER_TYPE_HUMAN" } }] }],
    ["organizationId", { filters: [{ organizationId: { organizationId: o.org } }] }],
    ["inIds (100 IDs)", { filters: [{ inIds: { ids: userIds } }] }],
    ...["ID", "CREATION_DATE", "CHANGE_DATE", "USERNAME", "DISPLAY_NAME", "EMAIL", "STATE", "TYPE"].map((c): [string, object] => [
      `sort ${c.toLowerCase()}`,
      { sortingColumn: `USER_FIELD_NAME_${c}` },
    ]),
    ["sort creation_date asc", { sortingColumn: "USER_FIELD_NAME_CREATION_DATE", query: { asc: true } }],
  ];
  const targets: [string, object][] = [
    ...textCases("name", "name", ["seed-4242", "SEED-4242", "seed-42", "SEED-42", "ed-42", "ED-42", "42", "42"]),
    ["inIds (100 IDs)", { filters: [{ inIds: { ids: targetIds } }] }],
    ...["ID", "CREATION_DATE", "CHANGE_DATE", "NAME", "TARGET_TYPE", "URL", "TIMEOUT", "ASYNC", "INTERRUPT_ON_ERROR"].map((c): [string, object] => [
      `sort ${c.toLowerCase()}`,
      { sortingColumn: `TARGET_FIELD_NAME_${c}` },
    ]),
  ];

  const cases: SearchCase[] = [];
  const measure = async (name: string, path: string, body: object) => {
    // One call first: its rows, and the total of the filter counted once (kept until the table changes).
    const first = await post(path, body);
    const cpu0 = cpuOf(o.pid);
    const r = await httpLoad(name, {
      url: o.api(path),
      method: "POST",
      headers: o.headers,
      body: JSON.stringify(body),
      connections: 10,
      duration: o.seconds,
      ...(o.rate ? { overallRate: o.rate } : {}),
    });
    const cpu = cpuOf(o.pid) - cpu0;
    return { ...r, rows: first.result.length as number, cpuMs: r.requests ? cpu / r.requests : Number.NaN };
  };
  const run = async (resource: string, path: string, name: string, body: { query?: object }) => {
    const c: SearchCase = await measure(`${resource} ${name}`, path, body);
    if (o.oneRow && c.rows === 100) c.oneRowCpuMs = (await measure(`${c.name}, one row`, path, { ...body, query: { ...body.query, limit: 1 } })).cpuMs;
    cases.push(c);
  };
  for (const [name, body] of users) await run("SearchUsers", "/resources/v3alpha/users/_search", name, body);
  await run("SearchUsers", `/resources/v3alpha/users/_search?ctx.org_id=${o.org}`, "organisation context", {});
  for (const [name, body] of targets) await run("SearchTargets", "/resources/v3alpha/targets/_search", name, body);

  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(
    `\n${pad(`search (REST, ${o.rate ? `${o.rate}/s open loop over ` : ""}10 connections, ${o.seconds} s each)`, 50)} ${pad("rows", 5)} ${pad("req/s", 7)} ${pad("p50 ms", 7)} ${pad("p99 ms", 7)} ${pad("errors", 7)} node CPU ms/page${o.oneRow ? "  one-row page  x" : ""}`,
  );
  for (const c of cases) {
    const flag = c.p99 >= 20 || c.cpuMs > 1 ? "  *" : "";
    const oneRow = c.oneRowCpuMs === undefined ? "" : `  ${c.oneRowCpuMs.toFixed(2)}  x${(c.cpuMs / c.oneRowCpuMs).toFixed(2)}`;
    console.log(
      `${pad(c.name, 50)} ${pad(String(c.rows), 5)} ${pad(c.rps.toFixed(0), 7)} ${pad(c.p50.toFixed(2), 7)} ${pad(c.p99.toFixed(2), 7)} ${pad(String(c.errors), 7)} ${c.cpuMs.toFixed(2)}${oneRow}${flag}`,
    );
  }
  const worst = (f: (c: SearchCase) => number) => cases.reduce((a, b) => (f(b) > f(a) ? b : a));
  const p99 = worst((c) => c.p99);
  const cpu = worst((c) => c.cpuMs);
  const full = cases.filter((c) => c.rows === 100);
  const mean = full.reduce((s, c) => s + c.cpuMs, 0) / (full.length || 1);
  return {
    cases,
    lines: [
      `search: worst p99 ${p99.p99.toFixed(2)} ms (${p99.name}; goal < 20), ${cases.filter((c) => c.p99 >= 20).length} of ${cases.length} cases at or above`,
      `search: Node CPU per page worst ${cpu.cpuMs.toFixed(2)} ms (${cpu.name}), mean over full pages ${mean.toFixed(2)} ms (goal <= 1)`,
    ],
  };
}
