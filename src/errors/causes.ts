/**
 * An error and its causes (`cause`), outermost first, at most `depth` of them: libraries wrap the error that
 * says what happened (openid-client's "something went wrong", Prisma's codes around the driver's: a known
 * request error carries the driver adapter's error in `meta.driverAdapterError`).
 */
export function* causesOf(err: unknown, depth = 6): Generator<unknown> {
  for (let e = err, n = 0; e !== undefined && e !== null && n < depth; e = causeOf(e), n++) {
    yield e;
    if (typeof e !== "object") return;
  }
}

function causeOf(e: unknown): unknown {
  const { cause, meta } = e as { cause?: unknown; meta?: { driverAdapterError?: unknown } };
  return cause ?? meta?.driverAdapterError;
}

/** The messages of an error and its causes, joined ("something went wrong: unreachable (read ECONNRESET)"). */
export function reasonsOf(err: unknown): string {
  return [...causesOf(err)].map((e) => (e instanceof Error ? e.message : String(e))).join(": ");
}
