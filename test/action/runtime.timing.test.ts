import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { expectCode } from "../support/clients.js";
import { executionsFixture, LANG } from "./executions-fixture.js";

/**
 * Executions measured against the clock: a target cut at its timeout, an async target not waited for. The
 * "timing" project runs these files one at a time after the others (package.json's test script).
 */
let f: Awaited<ReturnType<typeof executionsFixture>>;
beforeAll(async () => {
  f = await executionsFixture();
});
afterAll(() => f?.t.close());
afterEach(() => f.reset());

describe("request executions against the clock", () => {
  it("cut a slow target at its timeout", async () => {
    const slow = await f.receiver(() => ({ delayMs: 3000 }));
    const cut = await f.target(slow, { timeout: "0.2s", mode: "interrupt" });
    await f.onRequest(`/${LANG}/ResolveLanguages`, [cut.id]);
    const t0 = Date.now();
    const err = await expectCode(f.lang.resolveLanguages({}), Code.FailedPrecondition);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(err.rawMessage).toContain("did not answer within 200 ms");
    const tolerant = await f.target(slow, { timeout: "0.2s" });
    await f.onRequest(`/${LANG}/ResolveLanguages`, [tolerant.id]);
    const t1 = Date.now();
    await f.lang.resolveLanguages({});
    expect(Date.now() - t1).toBeLessThan(2000);
  });

  it("do not wait for an async target", async () => {
    const slow = await f.receiver(() => ({ delayMs: 1500, status: 500 }));
    const fire = await f.target(slow, { mode: "async" });
    await f.onRequest(`/${LANG}/ResolveLanguages`, [fire.id]);
    const t0 = Date.now();
    await f.lang.resolveLanguages({});
    expect(Date.now() - t0).toBeLessThan(1000);
    await slow.waitFor(1);
  });
});
