import { classifyFailure, describeFailure, type FailureKind } from "../failure.ts";
import type { ConsumeRuntime } from "./runtime.ts";
import type { Delivery, Outcome } from "./types.ts";

/** Settles one message by its handler's outcome: ack, nak after `retryInMs`, term, or a reported failure. */
export async function settle<T>(rt: ConsumeRuntime<T>, d: Delivery<T>, outcome: Outcome): Promise<void> {
  if (outcome !== undefined && outcome !== "ack" && "deadLetterParts" in outcome) {
    for (const part of outcome.deadLetterParts) if (!(await rt.deadLetterPart(d.msg, part))) return;
    rt.release(d.msg);
    return d.msg.ack();
  }
  if (outcome !== undefined && outcome !== "ack" && "fail" in outcome) {
    const kind = classifyFailure(outcome.fail);
    // Reported, not thrown: nothing to keep in hand, so a transient one comes back shortly.
    if (kind !== "transient") return failed(rt, d, outcome.fail, kind);
    rt.release(d.msg);
    return d.msg.nak(rt.transient.max);
  }
  rt.release(d.msg);
  if (outcome === undefined || outcome === "ack") d.msg.ack();
  else if ("retryInMs" in outcome) d.msg.nak(Math.max(0, Math.round(outcome.retryInMs)));
  else d.msg.term(outcome.term);
}

/**
 * A failure isolated to one message: a permanent one dead-letters at once; a retry one naks with
 * the policy's backoff until delivery `maxDeliver`, which dead-letters.
 */
export async function failed<T>(rt: ConsumeRuntime<T>, d: Delivery<T>, err: unknown, kind: FailureKind): Promise<void> {
  const reason = describeFailure(err);
  const count = d.msg.info.deliveryCount;
  if (kind === "permanent") return rt.deadLetter(d.msg, d.value, reason);
  if (count >= rt.maxDeliver)
    return rt.deadLetter(d.msg, d.value, `failed on delivery ${count} of ${rt.maxDeliver}: ${reason}`);
  const delay = rt.backoff[Math.min(count - 1, rt.backoff.length - 1)] ?? 1_000;
  rt.log.error("message failed; will retry", { seq: d.msg.seq, delivery: count, retryInMs: delay, err: err as Error });
  rt.release(d.msg);
  d.msg.nak(delay);
}

/** Gives messages back at once (stopping during a transient outage): another instance takes them. */
export function giveBack<T>(rt: ConsumeRuntime<T>, items: Delivery<T>[]): void {
  for (const d of items) {
    rt.release(d.msg);
    d.msg.nak();
  }
}

/** Waits out a transient failure; false when stopping (the caller gives the messages back). */
export async function waitTransient<T>(
  rt: ConsumeRuntime<T>,
  attempt: number,
  size: number,
  err: unknown,
): Promise<boolean> {
  if (rt.isStopping()) return false;
  const delay = Math.min(rt.transient.max, rt.transient.first * 2 ** Math.min(attempt, 20));
  if (attempt === 0 || attempt % 10 === 0)
    rt.log.warn("dependency unavailable; keeping the messages and retrying", {
      size,
      retryInMs: delay,
      attempt,
      err: err as Error,
    });
  await rt.sleep(delay);
  return !rt.isStopping();
}
