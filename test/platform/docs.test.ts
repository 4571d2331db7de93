import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allEventTypes } from "../../src/events/index.js";
import { projectRoot } from "../../src/storage/paths.js";

describe("documentation", () => {
  it("lists every event type the server writes (event executions are configured from it)", () => {
    const doc = readFileSync(join(projectRoot, "docs", "events.md"), "utf8");
    for (const type of allEventTypes) expect(doc, type).toContain(`\`${type}\``);
  });

  it("keeps the README's quick start to the two commands", () => {
    const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
  });
});
