import http from "node:http";
import { rest } from "./clients.js";

/** Calls `probe` every 100 ms until it gives a value (not undefined or false); fails naming `what` after `ms`. */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The value of a sample in a metrics text, summed over the lines matching `pattern`. */
export function sample(text: string, pattern: RegExp): number {
  return text
    .split("\n")
    .filter((l) => pattern.test(l))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

/**
 * A keep-alive connection of its own to a server of several workers, and the worker that serves it (found from
 * the labelled metrics). `cleanup` is given the agent to destroy at the end.
 */
export async function pinnedConnection(url: string, cleanup: (f: () => void) => void): Promise<{ agent: http.Agent; worker: string }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  cleanup(() => agent.destroy());
  const before = (await rest(url, "GET", "/metrics", { agent })).body as string;
  for (let i = 0; i < 3; i++) await rest(url, "GET", "/.well-known/openid-configuration", { agent });
  const after = (await rest(url, "GET", "/metrics", { agent })).body as string;
  for (const w of ["0", "1"]) {
    const served = new RegExp(`^svc_http_requests_total\\{.*route="/.well-known/openid-configuration".*worker="${w}"`);
    if (sample(after, served) - sample(before, served) === 3) return { agent, worker: w };
  }
  throw new Error("no worker counted the pinned connection's calls");
}

/** Two pinned connections served by different workers (connections are handed to the workers in turn). */
export async function connectionsToTwoWorkers(url: string, cleanup: (f: () => void) => void) {
  const a = await pinnedConnection(url, cleanup);
  let b = await pinnedConnection(url, cleanup);
  for (let i = 0; i < 6 && b.worker === a.worker; i++) b = await pinnedConnection(url, cleanup);
  if (b.worker === a.worker) throw new Error("every connection went to one worker");
  return { a, b };
}
