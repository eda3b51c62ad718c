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
 * Batch mode: queues accepted messages per lane and runs up to `concurrency` batches at once, each
 * of up to `maxBatch` messages (a partial one once the oldest waited `maxWaitMs`). A batch takes the
 * busy lanes' messages in turn, one each per round, so a lane with a backlog fills only what the
 * others leave: a quiet lane's message waits at most for the batches already running and its own
 * (issue 41). A lane's pull waits while its queue holds `maxBatch` (the server keeps the rest of
 * its backlog). One lane (an unlaned stream) behaves as a single FIFO buffer. Within a lane,
 * messages are batched in arrival order, and batches start in the order they were taken.
 */
export function batchRunner<T>(rt: ConsumeRuntime<T>, mode: BatchMode<T>): Runner<T> {
  const { maxBatch, maxWaitMs } = mode.batch;
  const concurrency = Math.max(1, mode.batch.concurrency ?? 1);
  const running = new Set<Promise<void>>();
  // Per lane, in arrival order; the Map's order is the turn order (a lane emptied leaves it and
  // joins at the end when it has messages again).
  const queues = new Map<string, Delivery<T>[]>();
  const roomFor = new Map<string, () => void>();
  let pending = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The oldest pending message waited maxWaitMs (or the runner drains): a partial batch may go.
  let due = false;

  const take = (): Delivery<T>[] => {
    const batch: Delivery<T>[] = [];
    while (batch.length < maxBatch && pending > 0) {
      for (const [lane, queue] of queues) {
        if (batch.length >= maxBatch) break;
        batch.push(queue.shift()!);
        pending--;
        if (queue.length === 0) queues.delete(lane);
      }
    }
    for (const [lane, wake] of roomFor) {
      if ((queues.get(lane)?.length ?? 0) < maxBatch) {
        roomFor.delete(lane);
        wake();
      }
    }
    return batch;
  };

  const pump = (): void => {
    while (running.size < concurrency && (pending >= maxBatch || (due && pending > 0))) {
      const batch = take();
      due = false;
      const p: Promise<void> = runBatch(rt, batch, mode.handle)
        .catch((err) => rt.log.error("batch runtime error", { err: err as Error }))
        .finally(() => {
          running.delete(p);
          pump();
        });
      running.add(p);
      rt.track(p);
    }
    if (pending === 0) {
      due = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
    } else if (!timer && !due) {
      timer = setTimeout(() => {
        timer = undefined;
        due = true;
        pump();
      }, maxWaitMs);
    }
  };

  return {
    maxMessages: Math.max(maxBatch * 2, 100),
    acceptFor: (lane) => async (d) => {
      let queue = queues.get(lane);
      if (!queue) queues.set(lane, (queue = []));
      queue.push(d);
      pending++;
      pump();
      if (queue.length >= maxBatch && queues.get(lane) === queue)
        await new Promise<void>((wake) => roomFor.set(lane, wake));
    },
    drain: async () => {
      for (;;) {
        due = true;
        pump();
        if (running.size === 0 && pending === 0) return;
        await Promise.race(running);
      }
    },
  };
}
