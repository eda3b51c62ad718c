import { DeliveryJob } from "../payloads.ts";
import type { JetStreamClient } from "@nats-io/jetstream";
import { canonicalJson, randomBytes, randomToken } from "../crypto.ts";
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

/**
 * The first 8 of an id's 24 characters: its creation time in milliseconds in base 36 (digits,
 * then lowercase letters; until the year 2059), so ids sort by time and a delivery's primary key
 * entry is written at the index's right edge, not on a random leaf (a random id dirtied a leaf
 * of its own per insert: a full page image in the WAL after each checkpoint, and at retention
 * scale a read; bench/dispatch-ids.ts). Digits and lowercase letters sort alike under the C
 * collation and the usual linguistic ones (glibc, ICU), so the order holds whatever the cluster's.
 */
export const deliveryIdTime = (ms: number) => Math.floor(ms).toString(36).padStart(8, "0");

/** `msg_` + 24 base64url characters: 8 of time (deliveryIdTime), 16 random (96 bits); the delivery id and `webhook-id`. */
export const newDeliveryId = (now = Date.now()) => `msg_${deliveryIdTime(now)}${randomToken(12)}`;

/** `n` ids of newDeliveryId's form from one draw of random bytes (the fan-out offers several per event). */
export function newDeliveryIds(n: number, now = Date.now()): string[] {
  const time = deliveryIdTime(now);
  const bytes = Buffer.from(randomBytes(12 * n).buffer);
  return Array.from({ length: n }, (_, i) => `msg_${time}${bytes.toString("base64url", 12 * i, 12 * i + 12)}`);
}

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

/**
 * A delivery body around its id, for the fan-out that picks ids in SQL (one statement per batch):
 * `head + id + tail` is byte for byte `deliveryBody` with that id. Keys sort as data, id,
 * timestamp, type, so the id sits between `data` and `timestamp`; an id of `newDeliveryId`
 * (base64url) needs no escaping. shared/webhooks/deliveries.test.ts holds the two together.
 */
export function deliveryBodyParts(input: Omit<Parameters<typeof deliveryBody>[0], "id">): {
  head: string;
  tail: string;
} {
  // The last occurrence: only the timestamp and the type follow the id, neither can hold it.
  const marker = JSON.stringify("\u0000id\u0000");
  const whole = deliveryBody({ ...input, id: JSON.parse(marker) });
  const at = whole.lastIndexOf(marker);
  return { head: `${whole.slice(0, at)}"`, tail: `"${whole.slice(at + marker.length)}` };
}

/** Publishes attempt jobs; the message id dedupes a replayed fan-out inside the stream's window. */
export async function publishDeliveryJobs(
  js: JetStreamClient,
  topology: Topology,
  jobs: Array<{ job: DeliveryJob; msgID: string }>,
): Promise<void> {
  await Promise.all(jobs.map(({ job, msgID }) => publish(js, topology, deliveriesStream, job, { msgID })));
}
