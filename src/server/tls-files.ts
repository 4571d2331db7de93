import { type FSWatcher, watch } from "node:fs";
import { dirname } from "node:path";
import { parseTlsPair, readTlsFile, type TlsFiles, type TlsPair } from "../crypto/tls-pair.js";

export interface TlsLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** How long events on the watched directories are gathered before the files are read (a renewal writes both). */
const SETTLE_MS = 250;
/** A pair that fails is read once more after this long before the warning: a writer may be between the two files. */
const RECHECK_MS = 1_000;

/**
 * Watches SVC_TLS_CERT and SVC_TLS_KEY and hands a changed pair to `apply` once both files parse and the key is
 * the certificate's. The directories are watched (a Kubernetes secret volume swaps a symlink to a new directory:
 * the files' own inodes never change) and the files are read again every `pollMs` as well (watches miss changes
 * on some mounts, and a watch cannot be had everywhere). Each distinct content is tried once: a pair that does not
 * serve is warned about once and the previous pair keeps serving.
 */
export class TlsFileWatcher {
  private readonly watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  /** The contents last applied or refused. */
  private seen: { cert: Buffer | undefined; key: Buffer | undefined; error: string | undefined };
  /** A failing content seen once, read again after RECHECK_MS before it is refused. */
  private suspect: string | undefined;

  constructor(
    private readonly files: TlsFiles,
    initial: TlsPair,
    private readonly apply: (pair: TlsPair) => void,
    private readonly log: TlsLog,
    private readonly pollMs = 5_000,
  ) {
    this.seen = { cert: initial.cert, key: initial.key, error: undefined };
  }

  start(): void {
    if (this.poll) return;
    for (const dir of new Set([dirname(this.files.certPath), dirname(this.files.keyPath)])) {
      try {
        const w = watch(dir, { persistent: false }, () => this.soon(SETTLE_MS));
        w.on("error", () => w.close());
        this.watchers.push(w);
      } catch (err) {
        // No watch (inotify limits, a file system without events): the polling alone finds the change.
        this.log.warn({ dir, err: (err as Error).message }, "cannot watch the directory of SVC_TLS_CERT / SVC_TLS_KEY; polling it instead");
      }
    }
    this.poll = setInterval(() => this.check(), this.pollMs);
    this.poll.unref();
  }

  stop(): void {
    for (const w of this.watchers) w.close();
    this.watchers.length = 0;
    clearInterval(this.poll);
    clearTimeout(this.settle);
    this.poll = undefined;
  }

  private soon(ms: number): void {
    if (!this.poll) return;
    clearTimeout(this.settle);
    this.settle = setTimeout(() => this.check(), ms);
    this.settle.unref();
  }

  /** Reads both files; applies a new pair that serves, refuses one that does not (after a second look). */
  check(): void {
    let cert: Buffer | undefined;
    let key: Buffer | undefined;
    let error: string | undefined;
    try {
      cert = readTlsFile("SVC_TLS_CERT", this.files.certPath);
      key = readTlsFile("SVC_TLS_KEY", this.files.keyPath);
    } catch (e) {
      error = (e as Error).message;
    }
    const same = (a: Buffer | undefined, b: Buffer | undefined) => (a && b ? a.equals(b) : a === b);
    if (same(cert, this.seen.cert) && same(key, this.seen.key) && error === this.seen.error) return;
    let pair: TlsPair | undefined;
    if (!error) {
      try {
        pair = parseTlsPair(this.files, cert!, key!);
      } catch (e) {
        error = (e as Error).message;
      }
    }
    if (pair) {
      this.suspect = undefined;
      this.seen = { cert, key, error: undefined };
      this.apply(pair);
      this.log.info({ serial: pair.serial, subject: pair.subject, validTo: pair.validTo.toISOString() }, "TLS certificate reloaded");
      return;
    }
    const signature = `${error}\u0000${cert?.toString("base64") ?? ""}\u0000${key?.toString("base64") ?? ""}`;
    if (this.suspect !== signature) {
      this.suspect = signature;
      this.soon(RECHECK_MS);
      return;
    }
    this.suspect = undefined;
    this.seen = { cert, key, error };
    this.log.warn({ reason: error }, "TLS certificate and key not reloaded: the previous certificate keeps serving");
  }
}
