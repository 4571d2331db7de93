// A form's change: its server error (for the form's fields), a status line after it worked ("Saved."), and dates as
// the page's language writes them.
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorOf } from "../api";
import { formatDate, useLanguage } from "../i18n";
import type { FormError } from "./base";

/** A server error, its field path without list indexes ("domains[1]" → "domains"), as inputs of a list are named. */
export function fieldErrorOf(err: unknown): FormError {
  const e = errorOf(err);
  return e.field ? { ...e, field: e.field.replace(/\[\d+\]/g, "") } : e;
}

/**
 * One change at a time: `run(fn, done)` clears the error and status, runs fn, then shows `done` (and with `refresh`
 * refreshes every query) or the error; it returns fn's result, undefined when it failed.
 */
export function useRun({ refresh = false, toError = errorOf }: { refresh?: boolean; toError?: (err: unknown) => FormError } = {}) {
  const qc = useQueryClient();
  const [error, setError] = useState<FormError>();
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);
  async function run<R>(fn: () => Promise<R>, done?: string): Promise<R | undefined> {
    setError(undefined);
    setStatus("");
    setBusy(true);
    try {
      const r = await fn();
      if (done) setStatus(done);
      if (refresh) await qc.invalidateQueries();
      return r;
    } catch (err) {
      setError(toError(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  const reset = () => {
    setError(undefined);
    setStatus("");
  };
  return { error, status, busy, run, reset, setError, setStatus };
}

/** A timestamp in the page's language; empty without one. */
export function useDate(): (ts: Timestamp | undefined) => string {
  const lang = useLanguage();
  return (ts) => formatDate(lang, ts ? timestampDate(ts) : undefined);
}
