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

/**
 * The longest a slice runs before it yields, whatever its count (issue 41): 50 spans or items are
 * about 1-3 ms on a quiet machine, but the lag probe (bench/flood/lag.ts, FLOOD_LAG_TURNS) saw
 * slices of 50 run 10-14.5 ms at load 6-8, every other tenant's request waiting behind them.
 */
export const TURN_BUDGET_MS = 2;

/**
 * For a loop over items: `const due = sliceClock(perTurn)`, then `if (due()) await nextTurn()`
 * before each item. True once `perTurn` items ran in the slice or `budgetMs` passed (counted from
 * the slice's second item: the first runs right after the yield, before the next call).
 */
export function sliceClock(perTurn: number, budgetMs = TURN_BUDGET_MS, now = () => performance.now()): () => boolean {
  let count = 0;
  let until = Number.POSITIVE_INFINITY;
  let fresh = true;
  return () => {
    const t = now();
    if (fresh) {
      until = t + budgetMs;
      fresh = false;
    } else if (count >= perTurn || t >= until) {
      count = 1; // the item the caller runs after its yield
      fresh = true;
      return true;
    }
    count++;
    return false;
  };
}

/**
 * Runs the steps at most `perTurn` at a time and for at most `budgetMs` a slice (one step past
 * it), yielding to the event loop between slices with `yieldTurn` (ingest: its tenant's turn,
 * shared/fair-turns.ts).
 */
export async function runInTurns<T>(
  steps: Steps<T>,
  perTurn: number,
  yieldTurn: () => Promise<void> = nextTurn,
  budgetMs = TURN_BUDGET_MS,
  now = () => performance.now(),
): Promise<T> {
  for (;;) {
    const until = now() + budgetMs;
    for (let i = 0; i < perTurn; i++) {
      const next = steps.next();
      if (next.done) return next.value;
      if (now() >= until) break;
    }
    await yieldTurn();
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
