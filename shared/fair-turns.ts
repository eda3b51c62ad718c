import { onNextTurn } from "./steps.ts";

/**
 * Turn-taking between tenants on one event loop (issue 41, flood fairness; docs/ingestion.md
 * "Turns"). Work that yields with `take(tenant)` resumes one continuation per event-loop turn,
 * the waiting tenants in rotation: a tenant with one request waiting goes after at most one slice
 * of each other waiting tenant, however many requests and slices the others have queued.
 *
 * Why not plain `setImmediate` per yield: every continuation queued before a turn runs in that
 * turn, so 32 of a flooder's requests (or slices) queued together are 32 x up to 2 ms that the
 * I/O of every other tenant (its request's arrival, its PubAck) waits behind. Here a turn runs one
 * continuation, and pending I/O is polled between any two.
 *
 * Bounded: one entry per waiting continuation; its owner is already holding the request (an
 * in-flight request waits in at most one place), so the queue is bounded by the requests the
 * server holds. A continuation is never dropped: every `take` resolves, in order per tenant.
 */
export interface FairTurns {
  /** Resolves in a later event-loop turn, when it is `tenant`'s turn. */
  take(tenant: string): Promise<void>;
  /** Continuations waiting for their turn (tests, metrics). */
  waiting(): number;
}

export function createFairTurns(schedule: (fn: () => void) => void = onNextTurn): FairTurns {
  /** Waiting continuations per tenant; the Map's order is the rotation (the next tenant first). */
  const queues = new Map<string, Array<() => void>>();
  let waiting = 0;
  let scheduled = false;

  const turn = () => {
    scheduled = false;
    const next = queues.entries().next();
    if (next.done) return;
    const [tenant, queue] = next.value;
    const resume = queue.shift()!;
    queues.delete(tenant);
    if (queue.length) queues.set(tenant, queue); // to the back of the rotation
    waiting--;
    if (waiting > 0) {
      scheduled = true;
      schedule(turn);
    }
    // Last: its continuation runs (as a microtask) once this callback returns, before the next turn.
    resume();
  };

  return {
    take(tenant) {
      return new Promise<void>((resolve) => {
        const queue = queues.get(tenant);
        if (queue) queue.push(resolve);
        else queues.set(tenant, [resolve]);
        waiting++;
        if (!scheduled) {
          scheduled = true;
          schedule(turn);
        }
      });
    },
    waiting: () => waiting,
  };
}
