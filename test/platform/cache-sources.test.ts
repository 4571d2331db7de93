import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { EventDefinition } from "../../src/eventstore/definition.js";
import type { EventStore, Reducer } from "../../src/eventstore/eventstore.js";
import { allProjections, instanceCascade, projectionReads, registerProjections } from "../../src/projections/index.js";
import { ProjectionCache } from "../../src/query/cache.js";
import { readFrom, readRow, tableSources } from "../../src/query/sources.js";

const WRITES = new Set(["create", "createMany", "update", "updateMany", "upsert", "delete", "deleteMany"]);

/**
 * A value that answers every property and call with itself: a reducer runs to its end on any payload. Iterated,
 * it is one such value (a row found), so that a handler's loop over the rows it read runs once.
 */
function anything(): unknown {
  const target = () => {};
  const proxy: unknown = new Proxy(target, {
    get: (_t, key) => {
      if (key === "then") return undefined; // not a promise
      if (key === Symbol.toPrimitive) return () => 1;
      if (key === Symbol.iterator)
        return function* () {
          yield proxy;
        };
      return proxy;
    },
    apply: () => proxy,
  });
  return proxy;
}

/** A payload whose every field is "": falsy flags, and strings where a handler decodes one (base64 bytes). */
function emptyFields(): unknown {
  return new Proxy({}, { get: (_t, key) => (key === "then" ? undefined : "") });
}

/** A transaction that records which tables a reducer writes, and (`read`) which it reads. */
function recordingTx(written: Set<string>, read = new Set<string>()) {
  return new Proxy(
    {},
    {
      get: (_t, model) =>
        new Proxy(
          {},
          {
            get: (_m, op) => async () => {
              (WRITES.has(String(op)) ? written : read).add(String(model));
              return anything();
            },
          },
        ),
    },
  );
}

/** Each table's Prisma model, as the delegates name it (`targets` -> `target`), from the schema's @@map lines. */
function modelsByTable(): Map<string, string> {
  const schema = readFileSync(new URL("../../prisma/schema.prisma", import.meta.url), "utf8");
  const out = new Map<string, string>();
  for (const [, model, body] of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const table = /@@map\("(\w+)"\)/.exec(body!)?.[1] ?? model!;
    out.set(table, model![0]!.toLowerCase() + model!.slice(1));
  }
  return out;
}

/** A connection that records which tables a reducer's own statements write. */
function recordingSql(written: Set<string>, models: Map<string, string>) {
  return {
    query: async (text: string) => {
      for (const [, table] of text.matchAll(/\b(?:INSERT INTO|(?<!DO )UPDATE|DELETE FROM)\s+"?(\w+)"?/gi))
        written.add(models.get(table!) ?? `unknown table ${table}`);
      return { rows: [], rowCount: 0 };
    },
  };
}

describe("cache sources", () => {
  it("each projection writes its own table and no other", async () => {
    const models = modelsByTable();
    const strays: string[] = [];
    const silent: string[] = [];
    for (const p of allProjections) {
      for (const h of p.handlers) {
        // Under either stand-in payload a handler writes nothing but its table; under one of them, its table.
        const written = new Set<string>();
        for (const payload of [anything(), emptyFields()]) {
          const event = { ...(anything() as object), aggregateType: h.event.aggregateType, type: h.event.type, payload, aggregateId: "1", instanceId: "1" };
          await h.reduce(recordingTx(written) as never, event as never, recordingSql(written, models) as never).catch(() => {});
        }
        for (const table of written) if (table !== p.table) strays.push(`${p.table} <- ${h.event.type} writes ${table}`);
        if (!written.has(p.table)) silent.push(`${p.table} <- ${h.event.type}`);
      }
    }
    expect(strays).toEqual([]);
    // Writes only for rows it finds whose roles the stand-in cannot tell apart (a grant's user grants losing keys).
    expect(silent).toEqual(["userGrant <- project.grant.changed"]);
    // The instance's removal, which takes every table's rows (found in the catalogue), is the one handler besides.
    expect(instanceCascade.handlers.map((h) => h.event.type)).toEqual(["instance.instance.removed"]);
  });

  it("a rebuild replays with each projection the tables its handlers read (projectionReads)", async () => {
    const models = modelsByTable();
    const reads: Record<string, string[]> = {};
    for (const p of allProjections) {
      const read = new Set<string>();
      for (const h of p.handlers) {
        for (const payload of [anything(), emptyFields()]) {
          const event = { ...(anything() as object), aggregateType: h.event.aggregateType, type: h.event.type, payload, aggregateId: "1", instanceId: "1" };
          await h.reduce(recordingTx(new Set(), read) as never, event as never, recordingSql(new Set(), models) as never).catch(() => {});
        }
      }
      read.delete(p.table);
      if (read.size) reads[p.table] = [...read].sort();
    }
    const declared = Object.fromEntries(Object.entries(projectionReads).map(([t, r]) => [t, [...r!].sort()]));
    expect(reads).toEqual(declared);
  });

  it("name, for every table a reducer writes, the aggregate type of the events it reduces", async () => {
    const registered: { def: EventDefinition<object>; reduce: Reducer }[] = [];
    // Only `on` is used while registering.
    const es = { on: (def: EventDefinition<object>, reduce: Reducer) => void registered.push({ def, reduce }) } as unknown as EventStore;
    registerProjections(es);
    expect(registered.length).toBeGreaterThan(50);
    const missing: string[] = [];
    const models = modelsByTable();
    for (const { def, reduce } of registered) {
      const written = new Set<string>();
      const event = { ...(anything() as object), aggregateType: def.aggregateType, type: def.type, payload: anything(), aggregateId: "1", instanceId: "1" };
      await reduce(recordingTx(written) as never, event as never, recordingSql(written, models) as never).catch(() => {});
      for (const table of written) {
        const sources: readonly string[] | undefined = (tableSources as Record<string, readonly string[]>)[table];
        if (!sources?.includes(def.aggregateType)) missing.push(`${table} <- ${def.type} (${def.aggregateType})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("drops only the entries read from what changed", async () => {
    const cache = new ProjectionCache();
    let loads = 0;
    const load = async () => ++loads;
    await cache.get("user-1", load, readRow("user", "1"));
    await cache.get("user-2", load, readRow("user", "2"));
    await cache.get("users", load, readFrom("user"));
    await cache.get("targets", load, readFrom("target"));
    await cache.get("anything", load);
    expect(loads).toBe(5);
    cache.invalidate([{ aggregateType: "user", aggregateId: "1" }]);
    const again = async (key: string, sources?: ReturnType<typeof readFrom>) => {
      const before = loads;
      await cache.get(key, load, sources);
      return loads > before ? "reloaded" : "cached";
    };
    expect(await again("user-1", readRow("user", "1"))).toBe("reloaded");
    expect(await again("user-2", readRow("user", "2"))).toBe("cached");
    expect(await again("users", readFrom("user"))).toBe("reloaded");
    expect(await again("targets", readFrom("target"))).toBe("cached");
    expect(await again("anything")).toBe("reloaded");
    // A cascade: an organisation's events drop every user row.
    cache.invalidate([{ aggregateType: "org", aggregateId: "9" }]);
    expect(await again("user-2", readRow("user", "2"))).toBe("reloaded");
    expect(await again("targets", readFrom("target"))).toBe("cached");
  });
});
