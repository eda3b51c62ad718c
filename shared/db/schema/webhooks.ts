import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { requiredUuid, serviceFk, tenantId, traceServiceId, ts } from "./columns.ts";
import { timeOrderedId } from "./ids.ts";
import { tenantForeignKey } from "./tenant-keys.ts";

export const webhookSubscriptions = pgTable(
  "webhook_subscriptions",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    name: text("name").notNull(),
    url: text("url").notNull(),
    eventTypes: text("event_types").array().notNull(),
    /** How monitor events are shaped for this subscription (migration 0014, docs/monitors.md). */
    payloadFormat: text("payload_format", { enum: ["standard", "chat"] })
      .notNull()
      .default("standard"),
    enabled: boolean("enabled").notNull().default(true),
    /** AES-GCM ciphertext of the `whsec_` secret (signing needs it in clear). */
    secretEncrypted: text("secret_encrypted").notNull(),
    previousSecretEncrypted: text("previous_secret_encrypted"),
    previousSecretExpiresAt: ts("previous_secret_expires_at"),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    lastDeliveryStatus: text("last_delivery_status"),
    disabledReason: text("disabled_reason"),
    /** Start of the current unbroken run of failures (5 days of it disables). */
    failingSince: ts("failing_since"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    // Keys and keys into keys end with tenant_id (migration 0019, docs/scaling.md "Sharding by tenant").
    primaryKey({ name: "webhook_subscriptions_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("webhook_subscriptions_trace_service_id_trace_services_id_fk", t),
    index("webhook_subscriptions_service_idx").on(t.traceServiceId),
  ],
);

/**
 * One event to one subscription. Unique on (subscription, event key) so re-selection dedupes.
 * A first attempt that succeeds is kept in the row itself (the `first_*` columns, migration 0035);
 * every other attempt is a `webhook_attempts` row.
 * `fillfactor = 50` (migration 0020): room on every page so the one update after the attempt is
 * HOT. No key to `tenants`: the tenant's deletion cascades here through the subscription.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").notNull(),
    tenantId: requiredUuid("tenant_id"),
    subscriptionId: uuid("subscription_id").notNull(),
    eventType: text("event_type").notNull(),
    /** e.g. `session:<pk>:2`; the dedup record. */
    eventKey: text("event_key").notNull(),
    /** The exact serialized body that is signed and sent on every attempt. */
    body: text("body").notNull(),
    enqueuedAt: ts("enqueued_at").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed", "stopped"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
    /**
     * A first attempt that succeeded within FOLDED_ATTEMPT_WINDOW of `created_at`, kept here
     * instead of a `webhook_attempts` row (migration 0035): its id, answer, duration and start.
     * Null otherwise; the history (GET /webhooks/:id/deliveries) reads both places.
     */
    firstAttemptId: uuid("first_attempt_id"),
    firstStatusCode: integer("first_status_code"),
    firstDurationMs: integer("first_duration_ms"),
    firstAttemptedAt: ts("first_attempted_at"),
    /**
     * The attempt claim (migration 0041): until when one attempt of this delivery is in hand. Set
     * by the fan-out's insert for the first attempt, or by deliveryState.claimAttempts, and only
     * while it is unset or past; an attempt whose claim is refused is not sent. Cleared by a
     * failure record and a manual re-send's claim. Not indexed (the updates stay HOT).
     */
    attemptLeasedUntil: ts("attempt_leased_until"),
  },
  (t) => [
    primaryKey({ name: "webhook_deliveries_pkey", columns: [t.id, t.tenantId] }),
    tenantForeignKey(
      "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk",
      { column: t.subscriptionId, tenantId: t.tenantId },
      webhookSubscriptions,
    ),
    uniqueIndex("webhook_deliveries_sub_event_uq").on(t.subscriptionId, t.eventKey, t.tenantId),
    index("webhook_deliveries_created_idx").on(t.createdAt),
    // The newest folded first attempts of a subscription (the history's read, migration 0035).
    index("webhook_deliveries_sub_created_idx").on(t.subscriptionId, t.createdAt),
  ],
);

export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: uuid("id").notNull().default(timeOrderedId),
    deliveryId: text("delivery_id").notNull(),
    /** The delivery's (migration 0019): the keys and the foreign key include it. */
    tenantId: requiredUuid("tenant_id"),
    subscriptionId: uuid("subscription_id").notNull(),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    attemptedAt: ts("attempted_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "webhook_attempts_pkey", columns: [t.id, t.tenantId] }),
    tenantForeignKey(
      "webhook_attempts_delivery_id_webhook_deliveries_id_fk",
      { column: t.deliveryId, tenantId: t.tenantId },
      webhookDeliveries,
    ),
    // No key to the subscription: the delivery's cascades (migration 0020).
    uniqueIndex("webhook_attempts_delivery_attempt_uq").on(t.deliveryId, t.attempt, t.tenantId),
    index("webhook_attempts_sub_idx").on(t.subscriptionId, t.attemptedAt),
  ],
);
