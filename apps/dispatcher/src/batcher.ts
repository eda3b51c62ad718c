/**
 * Coalesces single calls into one batched call: items arriving within `maxWaitMs` (or until
 * `maxSize`) share one `run`. Turns N round trips to Postgres into one under load while a lone
 * call waits at most `maxWaitMs`. `run` returns one result per item, in order; when a batch
 * fails, its items are retried one by one so only the bad one fails.
 */
export function createBatcher<I, O>(run: (items: I[]) => Promise<O[]>, opts: { maxSize: number; maxWaitMs: number }) {
  let pending: Array<{ item: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    run(batch.map((b) => b.item)).then(
      (out) => batch.forEach((b, i) => b.resolve(out[i])),
      (err) => {
        // One bad item must not fail its neighbours: retry each alone, each with its own outcome.
        if (batch.length === 1) return batch[0].reject(err);
        for (const b of batch) run([b.item]).then((out) => b.resolve(out[0]), b.reject);
      },
    );
  };
  return (item: I): Promise<O> =>
    new Promise<O>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (pending.length >= opts.maxSize) flush();
      else timer ??= setTimeout(flush, opts.maxWaitMs);
    });
}
