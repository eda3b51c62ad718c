import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import type { DeliveryJob } from "@cellar/shared/payloads";
import { publishDeliveryJobs } from "@cellar/shared/webhooks/deliveries";
import type { Loaded, Verdict } from "./attempt.ts";
import { crowdedDelayMs } from "./fairness.ts";
import type { DispatchPieces } from "./pieces.ts";
import { MAX_RETRY_AFTER_MS } from "./retry.ts";

/**
 * One delivery to attempt, wherever it comes from: MATURED's fan-out (a first attempt) or a
 * DELIVERIES job (a retry, a manual resend, or a first attempt handed on).
 */
export interface DeliveryWork {
  deliveryId: string;
  /** The row when the caller has it already (a fresh fan-out): no load query. */
  row?: Loaded;
  /** A manual resend: attempted at once, and final. */
  manual: boolean;
  /** How many times the stream has handed the message over (spreads out crowded retries). */
  deliveryCount: number;
}

/**
 * The delivery path, the same for first attempts and retries, in three stages: `prepare` (the
 * row, and whether it is due here and now), `send` and `record` (one attempt within the fairness
 * caps: pieces.attemptNow -> attempt.ts). Its result is the one Verdict the consumers map.
 */
export async function deliver(p: DispatchPieces, work: DeliveryWork): Promise<Verdict> {
  const ready = await prepare(p, work);
  if (!("id" in ready)) return ready;
  const verdict = await p.attemptNow(ready, work.manual);
  return verdict.action === "nak" ? { ...verdict, afterAttempt: ready.attempts + 1 } : verdict;
}

/**
 * The delivery's row while it is still pending: `term` when it is gone (subscription deleted or
 * pruned), `ack` when it is finished already (a redelivered job, a replayed event).
 */
export async function pendingRow(p: DispatchPieces, work: Pick<DeliveryWork, "deliveryId" | "row">) {
  const row = work.row ?? (await p.loadDelivery(work.deliveryId));
  if (!row) return { action: "term", reason: "delivery no longer exists" } as const;
  if (row.status !== "pending") return { action: "ack" } as const;
  return row;
}

/**
 * Stage 1: the pending row, due now and not crowded. A row whose next attempt has not come
 * (a job handed on after a failed first attempt arrives at once) waits it out, at most the
 * longest Retry-After at a time; a crowded destination or tenant should not hold every slot of
 * this process, so the delivery comes back shortly. A manual resend does not wait.
 */
async function prepare(p: DispatchPieces, work: DeliveryWork): Promise<Loaded | Verdict> {
  const row = await pendingRow(p, work);
  if (!("id" in row)) return row;
  const due = row.next_attempt_at && !work.manual ? row.next_attempt_at.getTime() - p.now().getTime() : 0;
  if (due > 0) return { action: "nak", delayMs: Math.min(due, MAX_RETRY_AFTER_MS), afterAttempt: row.attempts };
  if (p.crowded(row))
    return {
      action: "nak",
      delayMs: crowdedDelayMs(work.deliveryCount, p.attemptDeps.random),
      afterAttempt: row.attempts,
    };
  return row;
}

/** A verdict as the outcome of the DELIVERIES message that carried the delivery. */
export function streamOutcome(verdict: Verdict): Outcome {
  if (verdict.action === "ack") return "ack";
  if (verdict.action === "nak") return { retryInMs: verdict.delayMs };
  return { term: verdict.reason };
}

/**
 * The DELIVERIES consumer: a retry (or manual, or handed-on first) attempt through the one
 * delivery path; its verdict becomes the message's outcome (ack, nak with the curve's delay,
 * term).
 */
export async function handleDeliveryAttempt(
  p: DispatchPieces,
  { value: job, msg }: Delivery<DeliveryJob>,
): Promise<Outcome> {
  const verdict = await deliver(p, {
    deliveryId: job.deliveryId,
    manual: job.manual === true,
    deliveryCount: msg.info.deliveryCount,
  });
  return streamOutcome(verdict);
}

/**
 * A job of the consumer lanes replaced (published before lanes, on `deliveries.attempt`): moved
 * to its tenant's lane, where the retry curve goes on. Moving rather than attempting here lets
 * the retired consumer drain within one nak delay instead of a whole retry curve. The new
 * message id is derived from the old message's sequence: a crash between the publish and the
 * ack re-publishes a duplicate the stream drops.
 */
export async function moveRetiredJob(p: DispatchPieces, { value: job, msg }: Delivery<DeliveryJob>): Promise<Outcome> {
  const row = await pendingRow(p, job);
  if (!("id" in row)) return streamOutcome(row);
  await publishDeliveryJobs(p.deps.js, p.deps.topology, [
    { job: { ...job, tenantId: row.tenant_id }, msgID: `${job.deliveryId}:lane:${msg.seq}` },
  ]);
}
