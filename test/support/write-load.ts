import { expect } from "vitest";
import { rest } from "./clients.js";
import { until } from "./machine.js";
import type { TargetServer } from "./targets.js";

/**
 * Clients creating organisations one after the other until `stop`, while a test does something to the database
 * under them (a crash, a failover): what was acknowledged, and every answer's status.
 */
export interface WriteLoad {
  /** The organisations answered 201: name to ID. */
  acknowledged: Map<string, string>;
  statuses: Map<number, number>;
  stop(): Promise<void>;
  /** Only answers and UNAVAILABLE: never a 500 (or another fault), never a hang (each call has 15 s). */
  expectNoFault(): void;
  /** Every acknowledged organisation is there, as acknowledged. */
  expectAcknowledgedReadBack(): Promise<void>;
  /** A target of an execution on `org.org.added` got each acknowledged organisation's event, and none twice. */
  expectEachDeliveredOnce(receiver: TargetServer): Promise<void>;
}

export function writeOrganizations(server: { url: string; adminPat: string }, prefix: string, clients = 6): WriteLoad {
  const acknowledged = new Map<string, string>();
  const statuses = new Map<number, number>();
  const faults: string[] = [];
  let n = 0;
  let writing = true;
  const write = async () => {
    while (writing) {
      const name = `${prefix}-${n++}`;
      const r = await rest(server.url, "POST", "/resources/v3alpha/organizations", { token: server.adminPat, body: { name }, timeoutMs: 15_000 });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status >= 500 && r.status !== 503) faults.push(JSON.stringify([r.body, r.headers]));
      if (r.status === 201) acknowledged.set(name, r.body.details.id);
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const writers = Array.from({ length: clients }, write);
  return {
    acknowledged,
    statuses,
    async stop() {
      writing = false;
      await Promise.all(writers);
    },
    expectNoFault() {
      expect(
        [...statuses.keys()].filter((s) => s !== 201 && s !== 503),
        `${JSON.stringify(Object.fromEntries(statuses))} ${faults.join("\n")}`,
      ).toEqual([]);
    },
    async expectAcknowledgedReadBack() {
      for (const [name, id] of acknowledged) {
        const got = await rest(server.url, "GET", `/resources/v3alpha/organizations/${id}`, { token: server.adminPat });
        expect(got.status, name).toBe(200);
        expect(got.body.organization.name).toBe(name);
      }
    },
    async expectEachDeliveredOnce(receiver) {
      await until(
        "every acknowledged event delivered",
        () => {
          const delivered = new Set(receiver.received.map((r) => r.body?.payload?.name));
          return [...acknowledged.keys()].every((name) => delivered.has(name)) || undefined;
        },
        30_000,
      );
      // then none a second time
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const names = receiver.received.map((r) => r.body?.payload?.name as string);
      expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    },
  };
}
