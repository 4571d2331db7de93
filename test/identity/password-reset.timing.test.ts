import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESET_ANSWER_MS } from "../../src/login/recovery.js";
import { launchChromium } from "../support/browser.js";
import { mailsTo, startMessagingServer } from "../support/messaging.js";
import type { TestServer } from "../support/server.js";
import { linkIn, type MailServer } from "../support/smtp.js";
import { addHuman, newPage } from "../oidc/rp.js";

/**
 * What the forgot-password form's answer time gives away, measured: the "timing" project runs these files one
 * at a time after the others (package.json's test script), so that the machine's other work does not decide.
 */
let t: TestServer;
let mail: MailServer;
let close: () => Promise<void>;
let browser: Browser;
const PASSWORD = "Secr3t!pass";

beforeAll(async () => {
  ({ t, mail, close } = await startMessagingServer());
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await close?.();
});

/** Submits the page's form; milliseconds from the request sent to the answer's first byte, as the browser saw
 * them, which leaves out the browser's own rendering and scheduling on a loaded machine. */
async function timedSubmit(page: Page) {
  await page.click("button[type=submit]");
  return page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    return nav.responseStart - nav.requestStart;
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe("the forgot-password answer's time", () => {
  it("is the same for known and unknown login names, and never shorter than RESET_ANSWER_MS", async () => {
    await addHuman(t, "fred", PASSWORD);
    const { page, ctx } = await newPage(browser);
    const knownMs: number[] = [];
    const unknownMs: number[] = [];
    // five rounds, alternating, so that one slow moment does not decide
    for (let round = 0; round < 5; round++) {
      for (const [name, times] of [
        ["fred", knownMs],
        ["nobody-here", unknownMs],
      ] as const) {
        await page.goto(`${t.url}/ui/login/password/reset?loginName=${name}`);
        times.push(await timedSubmit(page));
        expect(await page.textContent("main")).toContain("If an account with this login name exists, we sent a link");
      }
    }
    for (const ms of [...knownMs, ...unknownMs]) expect(ms).toBeGreaterThanOrEqual(RESET_ANSWER_MS - 1);
    expect(Math.abs(median(knownMs) - median(unknownMs))).toBeLessThan(100);
    await ctx.close();
  });

  it("forgot password: a write held up in the database does not make the answer for a real account later", async () => {
    await addHuman(t, "gail", PASSWORD);
    const { page, ctx } = await newPage(browser);
    await page.goto(`${t.url}/ui/login/password/reset?loginName=gail`);
    // Another transaction holds the event log for 2 s; the code for gail cannot be stored until it ends.
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = t.server.db.prisma.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe("LOCK TABLE events IN EXCLUSIVE MODE");
        locked();
        await new Promise((r) => setTimeout(r, 2000));
      },
      { timeout: 10_000 },
    );
    await isLocked;
    const ms = await timedSubmit(page);
    expect(await page.textContent("main")).toContain("If an account with this login name exists, we sent a link");
    expect(ms).toBeGreaterThanOrEqual(RESET_ANSWER_MS - 1);
    expect(ms).toBeLessThan(1000);
    await holder;
    // The work went on after the answer: the mail arrives once the log is free.
    const [m] = await mailsTo(mail, "gail@example.com");
    expect(linkIn(m!.raw, "/ui/login/password/reset")).toContain("code=");
    await ctx.close();
  });
});
