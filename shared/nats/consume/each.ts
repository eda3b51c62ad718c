import { classifyFailure } from "../failure.ts";
import { createFairSlots } from "../fair-slots.ts";
import type { ConsumeRuntime } from "./runtime.ts";
import { failed, giveBack, settle, waitTransient } from "./settle.ts";
import type { Delivery, EachMode, Outcome, Runner } from "./types.ts";

/** The share of a laned stream's in-flight budget one lane may hold. */
const LANE_SHARE = 0.25;

/** Runs one message and settles it; a transient failure keeps it in hand and retries it. */
export async function runOne<T>(
  rt: ConsumeRuntime<T>,
  d: Delivery<T>,
  handle: (item: Delivery<T>) => Promise<Outcome>,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let outcome: Outcome;
    try {
      outcome = await handle(d);
    } catch (err) {
      const kind = classifyFailure(err);
      if (kind === "transient") {
        if (await waitTransient(rt, attempt, 1, err)) continue;
        return giveBack(rt, [d]);
      }
      return failed(rt, d, err, kind);
    }
    return settle(rt, d, outcome);
  }
}

/**
 * Each mode: one message per handler call, up to `maxInFlight` at once; on a laned stream each
 * lane holds at most `perLane` of them and a freed slot goes to the lane that waited longest.
 */
export function eachRunner<T>(rt: ConsumeRuntime<T>, mode: EachMode<T>): Runner<T> {
  const { maxInFlight } = mode.each;
  const perLane = rt.spec.consumer?.lanes
    ? (mode.each.perLane ?? Math.max(1, Math.ceil(maxInFlight * LANE_SHARE)))
    : maxInFlight;
  const slots = createFairSlots(maxInFlight, perLane);
  const inFlight = new Set<Promise<void>>();
  return {
    // A lane pulls no more than it may run: the rest stays in the stream for other instances.
    maxMessages: Math.min(perLane, maxInFlight),
    acceptFor:
      (lane, handle = mode.handle) =>
      async (d) => {
        const releaseSlot = await slots.acquire(lane);
        const p: Promise<void> = runOne(rt, d, handle)
          .catch((err) => rt.log.error("message runtime error", { err: err as Error }))
          .finally(() => {
            releaseSlot();
            inFlight.delete(p);
          });
        inFlight.add(p);
        rt.track(p);
      },
    drain: async () => {
      await Promise.all(inFlight);
    },
  };
}
