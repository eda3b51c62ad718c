import { classifyFailure, describeFailure } from "../failure.ts";
import type { ConsumeRuntime } from "./runtime.ts";
import { failed, giveBack, settle, waitTransient } from "./settle.ts";
import type { BatchMode, Delivery, Outcome, Runner } from "./types.ts";

type BatchHandler<T> = (items: Delivery<T>[]) => Promise<void | Outcome[]>;

/**
 * Runs one batch and settles each message: a transient failure keeps the batch in hand and
 * retries it; any other failure splits the batch in halves until the culprit is alone, so the
 * halves that pass are committed and only the culprit fails.
 */
export async function runBatch<T>(rt: ConsumeRuntime<T>, items: Delivery<T>[], handle: BatchHandler<T>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let outcomes: void | Outcome[];
    try {
      outcomes = await handle(items);
    } catch (err) {
      const kind = classifyFailure(err);
      if (kind === "transient") {
        if (await waitTransient(rt, attempt, items.length, err)) continue;
        return giveBack(rt, items);
      }
      if (items.length === 1) return failed(rt, items[0], err, kind);
      // Split until the culprit is alone: the halves that pass are committed.
      rt.log.warn("batch failed; splitting to isolate the failing message", {
        size: items.length,
        kind,
        err: describeFailure(err),
      });
      const mid = items.length >> 1;
      await runBatch(rt, items.slice(0, mid), handle);
      await runBatch(rt, items.slice(mid), handle);
      return;
    }
    await Promise.all(items.map((d, i) => settle(rt, d, outcomes ? outcomes[i] : undefined)));
    return;
  }
}

/**
 * Batch mode: buffers accepted messages into batches of up to `maxBatch` (a partial one after
 * `maxWaitMs`) and runs up to `concurrency` of them at once, started in arrival order.
 */
export function batchRunner<T>(rt: ConsumeRuntime<T>, mode: BatchMode<T>): Runner<T> {
  const { maxBatch, maxWaitMs } = mode.batch;
  const concurrency = Math.max(1, mode.batch.concurrency ?? 1);
  const running = new Set<Promise<void>>();
  let buffer: Delivery<T>[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Batches start in order: a timer flush and a full-buffer flush never overtake each other.
  let starting: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return starting;
    const batch = buffer;
    buffer = [];
    starting = starting.then(async () => {
      while (running.size >= concurrency) await Promise.race(running);
      const p: Promise<void> = runBatch(rt, batch, mode.handle)
        .catch((err) => rt.log.error("batch runtime error", { err: err as Error }))
        .finally(() => running.delete(p));
      running.add(p);
      rt.track(p);
    });
    return starting;
  };
  return {
    maxMessages: Math.max(maxBatch * 2, 100),
    acceptFor: () => async (d) => {
      buffer.push(d);
      if (buffer.length >= maxBatch) await flush();
      else if (!timer) timer = setTimeout(flush, maxWaitMs);
    },
    drain: async () => {
      await flush();
      await Promise.all(running);
    },
  };
}
