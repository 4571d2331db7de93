/**
 * The time every time-based decision reads (failure limits, lockouts, codes, tokens, keys, `max_age`): one
 * seam, so that tests move time instead of sleeping through it. The server takes one at start
 * (`StartOptions.clock`); everything else gets it from there. Milliseconds since the epoch, as Date.now.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The clock's time as a Date, for columns and payloads. */
export const dateOf = (clock: Clock): Date => new Date(clock.now());
