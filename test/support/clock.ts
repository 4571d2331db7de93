import type { Clock } from "../../src/domain/clock.js";

/**
 * A clock the test moves (`startTestServer(env, { clock })`): it starts at the real time and goes on with it,
 * shifted by every `advance`; `freeze` stops it, so that nothing a test asserts depends on how fast the machine
 * answers.
 */
export class MovableClock implements Clock {
  private offset = 0;
  private frozenAt: number | undefined;

  now(): number {
    return (this.frozenAt ?? Date.now()) + this.offset;
  }

  advance(ms: number): void {
    this.offset += ms;
  }

  freeze(): void {
    this.frozenAt ??= Date.now();
  }

  /**
   * Back to the real time, running. For a test whose moves would age what later tests of the same server begin:
   * a browser session's auth time is its event's created_at, set by the database with the real time, while its
   * idle and absolute lifetimes are decided on this clock (test/security/session-lifetimes.test.ts).
   */
  reset(): void {
    this.offset = 0;
    this.frozenAt = undefined;
  }
}
