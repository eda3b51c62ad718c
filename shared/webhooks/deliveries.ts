import { DeliveryJob } from "../payloads.ts";
import type { JetStreamClient } from "@nats-io/jetstream";
import { canonicalJson, randomToken } from "../crypto.ts";
import { deliveriesStream } from "../nats/catalogue.ts";
import { publish } from "../nats/publish.ts";
import type { Topology } from "../nats/topology.ts";

/** The DELIVERIES message schema lives with the other message schemas (payloads.ts). */
export { DeliveryJob };

export type WebhookEventType = "session.matured" | "trace.matured";

/** `data` of a delivery body (contract: Webhook delivery). */
export interface DeliveryData {
  tenant_id: string;
  trace_service_id: string;
  service_name: string;
  maturation_count: number;
  occurred_at: string;
  session_id?: string;
  trace_id?: string;
}

/** `msg_` + 24 random base64url characters: the delivery id and `webhook-id`. */
export const newDeliveryId = () => `msg_${randomToken(18)}`;

/**
 * The exact bytes sent and signed on every attempt: keys sorted at every level (contract:
 * Webhook delivery), serialized once at enqueue and stored, never re-serialized.
 */
export function deliveryBody(input: {
  id: string;
  type: WebhookEventType;
  timestamp: Date;
  data: DeliveryData;
}): string {
  return canonicalJson({ id: input.id, type: input.type, timestamp: input.timestamp.toISOString(), data: input.data });
}

/** Publishes attempt jobs; the message id dedupes a replayed fan-out inside the stream's window. */
export async function publishDeliveryJobs(
  js: JetStreamClient,
  topology: Topology,
  jobs: Array<{ job: DeliveryJob; msgID: string }>,
): Promise<void> {
  await Promise.all(jobs.map(({ job, msgID }) => publish(js, topology, deliveriesStream, job, { msgID })));
}
