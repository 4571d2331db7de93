// What Connect's end of every call costs with Node's default abort reason and with the shared one that
// src/server/abort-reason.ts installs (issue 12, point 4): connect-es creates a handler context per call and
// aborts it without a reason when the call ends. In process, the real `createHandlerContext`, both ways
// alternately in the same run.
import { createHandlerContext } from "@connectrpc/connect";
import { LanguageSettingsService } from "../gen/svc/settings/language/v3alpha/language_service_pb.js";
import { shareDefaultAbortReason } from "../src/server/abort-reason.js";

const method = LanguageSettingsService.method.resolveLanguages;

function endOfCall(requestSignal: AbortSignal) {
  const context = createHandlerContext({
    service: LanguageSettingsService,
    method,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/",
    requestSignal,
  });
  context.signal.addEventListener("abort", () => {});
  context.abort();
}

function microsPerCall(calls: number): number {
  const request = new AbortController().signal;
  for (let i = 0; i < 2000; i++) endOfCall(request);
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) endOfCall(request);
  return Number(process.hrtime.bigint() - start) / calls / 1000;
}

/** µs per call both ways; `restMsPerCall` (the server's CPU per REST call in the same run) puts the saving in proportion. */
export function abortBench(restMsPerCall?: number, calls = 50_000): string[] {
  const nodeDefault = AbortController.prototype.abort;
  shareDefaultAbortReason();
  const shared = AbortController.prototype.abort;
  const a: number[] = [];
  const b: number[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      AbortController.prototype.abort = nodeDefault;
      a.push(microsPerCall(calls));
      AbortController.prototype.abort = shared;
      b.push(microsPerCall(calls));
    }
  } finally {
    AbortController.prototype.abort = shared;
  }
  const median = (x: number[]) => x.sort((p, q) => p - q)[1]!;
  const saved = median(a) - median(b);
  const share = restMsPerCall ? `, ${((saved / 1000 / restMsPerCall) * 100).toFixed(1)} % of a REST call's server CPU` : "";
  return [
    `Connect's handler context per call, created and aborted, in process: Node's default abort reason ${median(a).toFixed(2)} µs, shared reason ${median(b).toFixed(2)} µs (saves ${saved.toFixed(2)} µs${share})`,
  ];
}
