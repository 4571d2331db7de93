/**
 * connect-es ends every call by aborting its handler context's AbortController without a reason (so that
 * listeners on `context.signal` let go: connect-es issue 1117, a change planned for its v2 and still so in
 * 2.1.2). Node then builds a new DOMException "AbortError" for the reason, capturing a stack trace each time,
 * on every RPC of every protocol. `bench/abort.ts` measures it against the shared reason below.
 *
 * An abort without a reason (or with `undefined`, which Node treats alike) now gets one shared AbortError:
 * the same class, name, message and code as Node's own; only its stack is that of the first abort, which
 * nothing reads. An abort with a reason is unchanged, and so is `AbortSignal.abort()`.
 */
let shared: DOMException | undefined;
let installed = false;

export function shareDefaultAbortReason(): void {
  if (installed) return;
  installed = true;
  const abort = AbortController.prototype.abort;
  AbortController.prototype.abort = function (this: AbortController, reason?: unknown) {
    // biome-ignore lint/suspicious/noAssignInExpressions: created on first use
    abort.call(this, reason === undefined ? (shared ??= new DOMException("This operation was aborted", "AbortError")) : reason);
  };
}
