import { DeliveryJob } from "../payloads";
import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import { canonicalJson, randomToken } from "../crypto";
import { deliveriesStream } from "../nats/catalogue";
import { publish } from "../nats/publish";
import type { Topology } from "../nats/topology";

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
export function deliveryBody(input: { id: string; type: WebhookEventType; timestamp: Date; data: DeliveryData }): string {
  return canonicalJson({ id: input.id, type: input.type, timestamp: input.timestamp.toISOString(), data: input.data });
}

export interface NewDelivery {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_type: string;
  event_key: string;
  body: string;
  enqueued_at: Date;
}

/**
 * Inserts delivery rows, skipping any (subscription, event) pair that already has one: the
 * dedup record that makes a re-selected trace a duplicate rather than a new delivery. Returns
 * the ids actually inserted.
 */
export async function insertDeliveries(sql: postgres.Sql | postgres.TransactionSql, rows: NewDelivery[]): Promise<string[]> {
  if (rows.length === 0) return [];
  // unnest keeps one statement text for any batch size (prepared once), unlike multi-row VALUES.
  const col = <K extends keyof NewDelivery>(k: K) => rows.map((r) => r[k]);
  const inserted = await sql<{ id: string }[]>`
    insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at)
    select * from unnest(${col("id")}::text[], ${col("tenant_id")}::uuid[], ${col("subscription_id")}::uuid[], ${col("event_type")}::text[],
      ${col("event_key")}::text[], ${col("body")}::text[], ${rows.map((r) => r.enqueued_at.toISOString())}::timestamptz[])
    on conflict (subscription_id, event_key) do nothing returning id`;
  return inserted.map((r) => r.id);
}

/** Publishes attempt jobs; the message id dedupes a replayed fan-out inside the stream's window. */
export async function publishDeliveryJobs(js: JetStreamClient, topology: Topology, jobs: Array<{ job: DeliveryJob; msgID: string }>): Promise<void> {
  await Promise.all(jobs.map(({ job, msgID }) => publish(js, topology, deliveriesStream, job, { msgID })));
}
