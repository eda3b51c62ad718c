import { runBatch } from "./batch.ts";
import type { ConsumeRuntime } from "./runtime.ts";
import type { BatchMode, Delivery, Runner } from "./types.ts";

/**
 * Batch mode with one lane per batch (`batch.perLane`): each batch holds the messages of one
 * lane only, at most `perLane` batches of a lane run at once and at most `concurrency` in all,
 * and a freed slot goes to the lane that has waited longest among those under their cap. So a
 * lane with a backlog holds at most `perLane` batches while `concurrency - perLane` remain for
 * the others, and a quiet lane's message waits for no batch of another lane: at most for its
 * own lane's running batches (issue 41: the activity markers, docs/maturation.md "Tenant lanes").
 * A lane's batch goes when it holds `maxBatch` messages or its oldest waited `maxWaitMs`; a
 * lane's pull waits while its queue holds `maxBatch` (the server keeps the rest of its backlog).
 * Within a lane, messages are batched in arrival order.
 */
export function laneBatchRunner<T>(rt: ConsumeRuntime<T>, mode: BatchMode<T>): Runner<T> {
  const { maxBatch, maxWaitMs } = mode.batch;
  const total = Math.max(1, mode.batch.concurrency ?? 1);
  const perLane = Math.max(1, Math.min(mode.batch.perLane ?? total, total));
  const running = new Set<Promise<void>>();
  const active = new Map<string, number>();
  // Per lane, its messages with when each arrived; the Map's order is the turn order (a lane whose
  // batch was taken goes to the end, one at its cap keeps its place).
  const queues = new Map<string, Array<{ d: Delivery<T>; at: number }>>();
  const roomFor = new Map<string, () => void>();
  let pending = 0;
  let draining = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Infinity;

  const ready = (queue: Array<{ at: number }>, now: number) =>
    queue.length >= maxBatch || draining || now - queue[0].at >= maxWaitMs;

  const start = (lane: string, batch: Delivery<T>[]) => {
    active.set(lane, (active.get(lane) ?? 0) + 1);
    const p: Promise<void> = runBatch(rt, batch, mode.handle)
      .catch((err) => rt.log.error("batch runtime error", { err: err as Error }))
      .finally(() => {
        running.delete(p);
        const n = (active.get(lane) ?? 1) - 1;
        if (n <= 0) active.delete(lane);
        else active.set(lane, n);
        pump();
      });
    running.add(p);
    rt.track(p);
  };

  const pump = (): void => {
    const now = Date.now();
    let nextDue = Infinity;
    while (running.size < total) {
      let pick: string | undefined;
      nextDue = Infinity;
      for (const [lane, queue] of queues) {
        if ((active.get(lane) ?? 0) >= perLane) continue;
        if (ready(queue, now)) {
          pick = lane;
          break;
        }
        nextDue = Math.min(nextDue, queue[0].at + maxWaitMs);
      }
      if (pick === undefined) break;
      const queue = queues.get(pick)!;
      const batch = queue.splice(0, maxBatch).map((q) => q.d);
      pending -= batch.length;
      queues.delete(pick);
      if (queue.length > 0) queues.set(pick, queue);
      if (queue.length < maxBatch) {
        roomFor.get(pick)?.();
        roomFor.delete(pick);
      }
      start(pick, batch);
    }
    // A partial batch that is not due yet: come back when it is (a full slot count re-pumps on
    // each batch's end).
    if (running.size < total && nextDue < Infinity && nextDue !== timerAt) {
      if (timer) clearTimeout(timer);
      timerAt = nextDue;
      timer = setTimeout(
        () => {
          timer = undefined;
          timerAt = Infinity;
          pump();
        },
        Math.max(0, nextDue - now),
      );
    }
    if (pending === 0 && timer) {
      clearTimeout(timer);
      timer = undefined;
      timerAt = Infinity;
    }
  };

  return {
    maxMessages: Math.max(maxBatch * 2, 100),
    acceptFor: (lane) => async (d) => {
      let queue = queues.get(lane);
      if (!queue) queues.set(lane, (queue = []));
      queue.push({ d, at: Date.now() });
      pending++;
      pump();
      if ((queues.get(lane)?.length ?? 0) >= maxBatch) await new Promise<void>((wake) => roomFor.set(lane, wake));
    },
    drain: async () => {
      draining = true;
      for (;;) {
        pump();
        if (running.size === 0 && pending === 0) return;
        if (running.size === 0) await new Promise((r) => setTimeout(r, 10));
        else await Promise.race(running);
      }
    },
  };
}
