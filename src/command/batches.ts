interface Waiting<I, O> {
  item: I;
  done: (out: O) => void;
  fail: (err: unknown) => void;
}

/**
 * Group commit: calls for one key that arrive while a batch of that key is being written wait and go
 * together into the next batch. Writes that queue on one lock (one aggregate, one unique key) then pay for
 * BEGIN, the lock and COMMIT once per batch instead of once per call. `write` gets the items in arrival
 * order and answers with one result per item; when it throws, every call of the batch fails with its error.
 */
export class Batches<I, O> {
  private readonly waiting = new Map<string, Waiting<I, O>[]>();

  constructor(
    private readonly write: (key: string, items: I[]) => Promise<O[]>,
    private readonly maxBatch = 100,
  ) {}

  add(key: string, item: I): Promise<O> {
    return new Promise<O>((done, fail) => {
      const queue = this.waiting.get(key);
      if (queue) {
        queue.push({ item, done, fail });
        return;
      }
      this.waiting.set(key, [{ item, done, fail }]);
      void this.drain(key);
    });
  }

  /** Writes the key's queue in batches until it is empty; calls arriving meanwhile join the queue. */
  private async drain(key: string): Promise<void> {
    const queue = this.waiting.get(key)!;
    while (queue.length) {
      const batch = queue.splice(0, this.maxBatch);
      try {
        const out = await this.write(
          key,
          batch.map((w) => w.item),
        );
        for (const [i, w] of batch.entries()) w.done(out[i]!);
      } catch (err) {
        for (const w of batch) w.fail(err);
      }
    }
    this.waiting.delete(key);
  }
}
