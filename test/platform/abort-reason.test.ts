import { createServer } from "node:http";
import { createHandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { LanguageSettingsService } from "../../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { shareDefaultAbortReason } from "../../src/server/abort-reason.js";

describe("the shared default abort reason (connect-es aborts every call's context)", () => {
  shareDefaultAbortReason();

  it("gives an abort without a reason Node's AbortError, one instance for all", () => {
    const a = new AbortController();
    const b = new AbortController();
    a.abort();
    b.abort(undefined);
    for (const reason of [a.signal.reason, b.signal.reason]) {
      expect(reason).toBeInstanceOf(DOMException);
      expect(reason).toMatchObject({ name: "AbortError", message: "This operation was aborted", code: 20 });
    }
    expect(a.signal.reason).toBe(b.signal.reason);
    expect(() => a.signal.throwIfAborted()).toThrow(DOMException);
  });

  it("keeps a given reason, fires listeners once, and leaves a second abort without effect", () => {
    const c = new AbortController();
    const reason = new Error("gone");
    let fired = 0;
    c.signal.addEventListener("abort", () => fired++);
    c.abort(reason);
    c.abort();
    expect(c.signal.reason).toBe(reason);
    expect(fired).toBe(1);
  });

  it("still aborts a Connect handler context and whatever is linked to it", () => {
    const request = new AbortController();
    const context = createHandlerContext({
      service: LanguageSettingsService,
      method: LanguageSettingsService.method.resolveLanguages,
      protocolName: "connect",
      requestMethod: "POST",
      url: "http://localhost/",
      requestSignal: request.signal,
    });
    let seen: unknown;
    context.signal.addEventListener("abort", () => (seen = context.signal.reason));
    context.abort();
    expect(context.signal.aborted).toBe(true);
    expect(seen).toMatchObject({ name: "AbortError" });
  });

  it("still cancels a fetch in flight with an AbortError", async () => {
    const server = createServer(() => {}); // never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const c = new AbortController();
      const { port } = server.address() as { port: number };
      const pending = fetch(`http://127.0.0.1:${port}/`, { signal: c.signal });
      setTimeout(() => c.abort(), 20);
      await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
