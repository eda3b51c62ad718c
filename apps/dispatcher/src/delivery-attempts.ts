import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import type { DeliveryJob } from "@cellar/shared/payloads";
import { publishDeliveryJobs } from "@cellar/shared/webhooks/deliveries";
import { crowdedDelayMs } from "./fairness.ts";
import type { DispatchPieces } from "./pieces.ts";
import { MAX_RETRY_AFTER_MS } from "./retry.ts";

/**
 * The DELIVERIES consumer: one retry (or manual) attempt of a delivery, once its
 * `next_attempt_at` has come; the verdict becomes the message's outcome (ack, nak with the
 * curve's delay, term).
 */
export async function handleDeliveryAttempt(
  p: DispatchPieces,
  { value: job, msg }: Delivery<DeliveryJob>,
): Promise<Outcome> {
  const row = await p.loadDelivery(job.deliveryId);
  if (!row) return { term: "delivery no longer exists" }; // subscription deleted or pruned
  if (row.status !== "pending") return "ack"; // a redelivered job already done
  // A job handed on after a failed first attempt arrives at once: wait out the curve.
  const wait =
    row.next_attempt_at && !job.manual
      ? Math.min(row.next_attempt_at.getTime() - p.now().getTime(), MAX_RETRY_AFTER_MS)
      : 0;
  if (wait > 0) return { retryInMs: wait };
  // A crowded endpoint should not hold every slot of this process: come back shortly.
  if (p.crowded(row)) return { retryInMs: crowdedDelayMs(msg.info.deliveryCount, p.attemptDeps.random) };
  const verdict = await p.attemptNow(row, job.manual === true);
  if (verdict.action === "ack") return "ack";
  if (verdict.action === "nak") return { retryInMs: verdict.delayMs };
  return { term: verdict.reason };
}

/**
 * A job of the consumer lanes replaced (published before lanes, on `deliveries.attempt`): moved
 * to its tenant's lane, where the retry curve goes on. Moving rather than attempting here lets
 * the retired consumer drain within one nak delay instead of a whole retry curve. The new
 * message id is derived from the old message's sequence: a crash between the publish and the
 * ack re-publishes a duplicate the stream drops.
 */
export async function moveRetiredJob(p: DispatchPieces, { value: job, msg }: Delivery<DeliveryJob>): Promise<Outcome> {
  const row = await p.loadDelivery(job.deliveryId);
  if (!row) return { term: "delivery no longer exists" };
  if (row.status !== "pending") return "ack";
  await publishDeliveryJobs(p.deps.js, p.deps.topology, [
    { job: { ...job, tenantId: row.tenant_id }, msgID: `${job.deliveryId}:lane:${msg.seq}` },
  ]);
}
