import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changeSettings } from "../../src/command/settings.js";
import { settingsAggregateId } from "../../src/events/index.js";
import { applyChange, type SettingsChange, type StoredValues } from "../../src/domain/settings.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Concurrent writes to one settings aggregate go together into one transaction (group commit).
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const languages = ["de", "fr", "it", "en"];

describe("settings written in batches", () => {
  it("decide each write on what the previous ones left, append one event per real change, and keep the projection equal to the log", async () => {
    const owner = { type: "org" as const, id: t.defaultOrgId };
    const changes: SettingsChange[] = Array.from({ length: 40 }, (_, i) =>
      i % 5 === 4
        ? { set: {}, reset: ["restricted_languages"] }
        : { set: { default_language: languages[i % languages.length]!, ...(i % 3 ? {} : { restricted_languages: ["de", "en", "fr", "it"] }) }, reset: [] },
    );
    // Writers other than the admin too: an append names one creator, so a batch appends per run of one caller.
    const creators = ["admin", "admin", "other"];
    const results = await Promise.all(
      changes.map((change, i) =>
        changeSettings(t.server.es, { kind: "language", instanceId: t.instanceId, owner, creator: creators[i % creators.length]!, change }),
      ),
    );

    const events = await t.server.db.prisma.event.findMany({
      where: { aggregateType: "settings", aggregateId: settingsAggregateId("language", "org", t.defaultOrgId) },
      orderBy: { sequence: "asc" },
    });
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    // Writes arriving while one was written waited and went together: fewer transactions than events.
    const { rows } = await t.server.db.pool.query<{ transactions: number }>(
      "SELECT count(DISTINCT tx_id::text)::int AS transactions FROM events WHERE aggregate_type = 'settings' AND aggregate_id = $1",
      [settingsAggregateId("language", "org", t.defaultOrgId)],
    );
    expect(rows[0]!.transactions).toBeGreaterThan(0);
    expect(rows[0]!.transactions).toBeLessThan(events.length);
    // Each write reports the sequence its own change (or the writes before it) left, never a later one.
    for (const r of results) expect(r.sequence).toBeLessThanOrEqual(events.length);
    expect(Math.max(...results.map((r) => r.sequence))).toBe(events.length);
    // Every appended event is a real change, and the projection is the log folded with applyChange.
    let folded: StoredValues = {};
    for (const e of events) {
      const payload = e.payload as unknown as SettingsChange;
      expect(applyChange(folded, payload)).not.toEqual(folded);
      folded = applyChange(folded, payload);
    }
    const row = await t.server.db.prisma.setting.findFirst({ where: { kind: "language", ownerType: "org", ownerId: t.defaultOrgId } });
    expect(row?.values).toEqual(folded);
    expect(row?.sequence).toBe(events.length);
    expect(new Set(events.map((e) => e.creator))).toEqual(new Set(["admin", "other"]));
  });
});
