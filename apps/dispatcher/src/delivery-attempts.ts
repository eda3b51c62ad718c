import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import type { DeliveryJob } from "@cellar/shared/payloads";
import { publishDeliveryJobs } from "@cellar/shared/webhooks/deliveries";
import { attempt, type DeliveryPath, pendingRow, type Verdict } from "./attempt.ts";

/** A verdict as the outcome of the DELIVERIES message that carried the delivery. */
export function streamOutcome(verdict: Verdict): Outcome {
  if (verdict.action === "ack") return "ack";
  if (verdict.action === "nak") return { retryInMs: verdict.delayMs };
  return { term: verdict.reason };
}

/**
 * The DELIVERIES consumer: a retry (or a manual resend, or a first attempt handed on) through the
 * delivery path (attempt.ts); its verdict is the message's outcome (ack, nak with the delay, term).
 */
export async function handleDeliveryAttempt(
  path: DeliveryPath,
  { value: job, msg }: Delivery<DeliveryJob>,
): Promise<Outcome> {
  const work = { deliveryId: job.deliveryId, manual: job.manual === true, deliveryCount: msg.info.deliveryCount };
  return streamOutcome(await attempt(path, work));
}

/**
 * A job of the consumer lanes replaced (published before lanes, on `deliveries.attempt`): moved
 * to its tenant's lane, where the retry curve goes on. Moving rather than attempting here lets
 * the retired consumer drain within one nak delay instead of a whole retry curve. The new
 * message id is derived from the old message's sequence: a crash between the publish and the
 * ack re-publishes a duplicate the stream drops.
 */
export async function moveRetiredJob(path: DeliveryPath, { value: job, msg }: Delivery<DeliveryJob>): Promise<Outcome> {
  const row = await pendingRow(path, job);
  if (!("id" in row)) return streamOutcome(row);
  const { js, topology } = path.resources;
  await publishDeliveryJobs(js, topology, [
    { job: { ...job, tenantId: row.tenant_id }, msgID: `${job.deliveryId}:lane:${msg.seq}` },
  ]);
}
