/**
 * Work over many items written once, as a generator that yields after each item, and run either
 * at once (`runAtOnce`) or across event-loop turns (`runInTurns`). An ingest host decoding and
 * mapping a 500-span OTLP body in one turn holds every other tenant's request behind it for
 * 10-50 ms on a loaded machine (issue 41, bench/flood.ts); the same code run in turns lets them
 * through every few items. Node's and Bun's `setImmediate` runs after pending I/O callbacks, so a
 * request waiting on a socket is served between two slices.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs the steps to their end in this turn (tests, tools, small inputs). */
export function runAtOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Runs the steps `perTurn` at a time, yielding to the event loop between slices. */
export async function runInTurns<T>(steps: Steps<T>, perTurn: number): Promise<T> {
  for (;;) {
    for (let i = 0; i < perTurn; i++) {
      const next = steps.next();
      if (next.done) return next.value;
    }
    await nextTurn();
  }
}

/**
 * Calls `fn` in the next turn of the event loop (after I/O callbacks, before timers). setImmediate,
 * not setTimeout(0), where there is one: Bun clamps the latter to ~1 ms and spends ~90 us of CPU on it.
 */
export const onNextTurn: (fn: () => void) => void =
  typeof setImmediate === "function" ? (fn) => setImmediate(fn) : (fn) => setTimeout(fn, 0);

/** Lets requests waiting on the event loop run (after I/O callbacks, before timers). */
export const nextTurn = (): Promise<void> => new Promise(onNextTurn);
