/**
 * `/metrics` of a machine running several workers: each worker renders its own text with the label
 * `worker="<slot>"` (prom-client's default labels), and the texts are merged family by family. Labelled rather
 * than summed: a replaced worker's counters restart at 0 as an ordinary reset of its own series (a sum would
 * drop and read as a reset of the machine's total), one hot worker's event-loop lag stays visible, and
 * `sum without (worker)` gives the totals.
 */

/**
 * Merges texts in Prometheus' exposition format so that each family appears once: its `# HELP` and `# TYPE`
 * from the first text that has it, then the samples of every text in order. A sample belongs to the family
 * whose header precedes it (a histogram's `_bucket`, `_sum` and `_count` included).
 */
export function mergeMetricTexts(texts: readonly string[]): string {
  const families = new Map<string, { header: string[]; samples: string[] }>();
  for (const text of texts) {
    let family: { header: string[]; samples: string[] } | undefined;
    for (const line of text.split("\n")) {
      if (!line) continue;
      const header = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (header) {
        const name = header[2]!;
        family = families.get(name);
        if (!family) {
          family = { header: [], samples: [] };
          families.set(name, family);
        }
        if (!family.header.some((h) => h.startsWith(`# ${header[1]} `))) family.header.push(line);
      } else if (family) family.samples.push(line);
    }
  }
  let out = "";
  for (const f of families.values()) out += `${[...f.header, ...f.samples].join("\n")}\n\n`;
  return out;
}

/** The supervisor's own series: its workers, how many serve, how many were replaced, how many a scrape missed. */
export function supervisorMetrics(s: { workers: number; running: number; restarts: number; missing: number }): string {
  return [
    "# HELP svc_workers Worker processes this server runs (SVC_WORKERS)",
    "# TYPE svc_workers gauge",
    `svc_workers{state="configured"} ${s.workers}`,
    `svc_workers{state="running"} ${s.running}`,
    "# HELP svc_worker_restarts_total Workers started again after they exited unasked",
    "# TYPE svc_worker_restarts_total counter",
    `svc_worker_restarts_total ${s.restarts}`,
    "# HELP svc_workers_scrape_missing Workers whose metrics this scrape lacks (they did not answer within 2 s)",
    "# TYPE svc_workers_scrape_missing gauge",
    `svc_workers_scrape_missing ${s.missing}`,
    "",
  ].join("\n");
}
