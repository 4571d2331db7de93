import { type ChildProcess, fork } from "node:child_process";
import type { Worker } from "node:cluster";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sendToWorker } from "../../src/server/workers.js";

/**
 * The supervisor tells workers about each other's changes, and a worker may die at any moment, another one's exit
 * included: that exit's handler then writes to a worker whose channel still counts as connected but whose
 * process is gone. The write fails with EPIPE, and without a callback Node emits it as an 'error' event, which
 * ended the supervisor (exit 1) in a clean-clone run while it drained its workers. The race is made certain
 * here: the process is gone and its channel is taken for connected, as the supervisor took it.
 */
const dir = mkdtempSync(join(tmpdir(), "svc-channel-"));
const idle = join(dir, "idle.cjs");
writeFileSync(idle, "setInterval(() => {}, 1000);\n");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A child process in a cluster worker's clothes, as the supervisor saw the dead writer: its channel still
 * counted as connected.
 */
const stillConnected = (child: ChildProcess) =>
  ({ isConnected: () => true, send: (...args: Parameters<ChildProcess["send"]>) => child.send(...args) }) as unknown as Worker;

describe("a message to a worker that is going away", () => {
  it("is dropped, never an error event, when its process is gone but its channel still counted as connected", async () => {
    let errors = 0;
    for (let round = 0; round < 3; round++) {
      const child = fork(idle, [], { stdio: "ignore" });
      child.on("error", () => errors++);
      await new Promise((ok) => child.once("spawn", ok));
      const gone = new Promise((ok) => child.once("exit", ok));
      child.kill("SIGKILL");
      await gone;
      sendToWorker(stillConnected(child), { t: "drain" });
      // A failed send is reported on a later tick.
      await new Promise((ok) => setTimeout(ok, 20));
    }
    expect(errors).toBe(0);
  });
});
