import { Type, type Static } from "@sinclair/typebox";
import type { JetStreamClient } from "@nats-io/jetstream";
import { canonicalJson, randomToken } from "../crypto";
import { subjects, type Topology } from "../nats/topology";

/** What the dispatcher publishes to DELIVERIES: a pointer to the delivery row. */
export const DeliveryJob = Type.Object({
  deliveryId: Type.String({ minLength: 1 }),
  /** Test sends and manual re-sends: one attempt, no retry curve. */
  manual: Type.Optional(Type.Boolean()),
});
export type DeliveryJob = Static<typeof DeliveryJob>;

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
export function deliveryBody(input: { id: string; type: WebhookEventType; timestamp: Date; data: DeliveryData }): string {
  return canonicalJson({ id: input.id, type: input.type, timestamp: input.timestamp.toISOString(), data: input.data });
}

/** Publishes attempt jobs; the message id dedupes a replayed fan-out inside the stream's window. */
export async function publishDeliveryJobs(js: JetStreamClient, topology: Topology, jobs: Array<{ job: DeliveryJob; msgID: string }>): Promise<void> {
  await Promise.all(jobs.map(({ job, msgID }) => js.publish(subjects.delivery(topology), JSON.stringify(job), { msgID, timeout: 10_000 })));
}
