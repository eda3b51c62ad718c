import { t } from "elysia";
import { SUBSCRIBABLE_EVENT_TYPES } from "@cellar/shared/webhooks/monitor-events";
import { badRequest } from "@cellar/shared/errors";
import { MATURED_EVENT_TYPES } from "@cellar/shared/payloads";
import type { WebhookEventType } from "@cellar/shared/webhooks/deliveries";
import type { AttemptRecord } from "@cellar/shared/webhooks/delivery-history";
import { Iso, Nullable } from "../http/schemas.ts";

/** Contract: at most 5 per trace service, disabled ones included; only deletion frees a slot. */
export const MAX_SUBSCRIPTIONS_PER_SERVICE = 5;
export const MAX_NAME_LENGTH = 200;
export const DEFAULT_PREVIOUS_SECRET_TTL_HOURS = 24;
export const MAX_PREVIOUS_SECRET_TTL_HOURS = 168;
export const DELIVERIES_LISTED = 10;
const DELIVERIES_LISTED_MAX = DELIVERIES_LISTED;

// Response schemas: the OpenAPI document is built from them (route `detail`).
// The contract's two, and the monitor events a subscription may opt into (docs/monitors.md).
const EventType = t.Union(SUBSCRIBABLE_EVENT_TYPES.map((e) => t.Literal(e)));
export const Subscription = t.Object({
  id: t.String(),
  trace_service_id: t.String(),
  name: t.String(),
  url: t.String(),
  event_types: t.Array(EventType),
  // Beyond the contract (docs/monitors.md): `chat` shapes monitor events as {"text": ...}.
  payload_format: t.Optional(t.Union([t.Literal("standard"), t.Literal("chat")])),
  enabled: t.Boolean(),
  consecutive_failures: t.Integer({ description: "Failed attempts since the last success" }),
  last_delivery_status: Nullable(t.Union([t.Literal("delivered"), t.Literal("failed")])),
  disabled_reason: Nullable(
    t.String({ description: "Set when the platform disabled it: redirect, gone, failing, private_address" }),
  ),
  created_at: Iso,
  updated_at: Iso,
});
export const SubscriptionWithSecret = t.Composite([
  Subscription,
  t.Object({ secret: t.String({ description: "whsec_ + base64 of 32 bytes; shown only here" }) }),
]);
export const RotatedSubscription = t.Composite([
  SubscriptionWithSecret,
  t.Object({ previous_secret_expires_at: Nullable(Iso) }),
]);
export const SubscriptionList = t.Object({ data: t.Array(Subscription) });
export const Attempt = t.Object({
  id: t.String(),
  delivery_id: t.String({ description: "Equals the webhook-id header" }),
  event_type: EventType,
  attempt: t.Integer({ minimum: 1 }),
  status_code: Nullable(t.Integer()),
  succeeded: t.Boolean(),
  duration_ms: t.Integer(),
  error: Nullable(t.String()),
  attempted_at: Iso,
  delivery_status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed"), t.Literal("stopped")]),
});
export const AttemptList = t.Object({ data: t.Array(Attempt, { maxItems: DELIVERIES_LISTED_MAX }) });
export const Accepted = t.Object({ id: t.String(), type: t.Optional(EventType), status: t.Literal("pending") });
export const NoContent = t.Null();

export interface SubscriptionRow {
  id: string;
  trace_service_id: string;
  project_id: string;
  name: string;
  url: string;
  event_types: string[];
  payload_format: string;
  enabled: boolean;
  consecutive_failures: number;
  last_delivery_status: string | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The subscription as every read shows it; `secret` only from create and rotate-secret. */
export function subscriptionView(row: SubscriptionRow) {
  return {
    id: row.id,
    trace_service_id: row.trace_service_id,
    name: row.name,
    url: row.url,
    event_types: row.event_types,
    payload_format: row.payload_format,
    enabled: row.enabled,
    consecutive_failures: row.consecutive_failures,
    last_delivery_status: row.last_delivery_status,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** One stored attempt of the delivery history: the shape shared/webhooks/delivery-history.ts reads. */
export type AttemptRow = AttemptRecord;

export function attemptView(row: AttemptRow) {
  return {
    id: row.id,
    delivery_id: row.delivery_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status_code: row.status_code,
    succeeded: row.status_code !== null && row.status_code >= 200 && row.status_code < 300,
    duration_ms: row.duration_ms,
    error: row.error,
    attempted_at: row.attempted_at.toISOString(),
    delivery_status: row.delivery_status,
  };
}

type Body = Record<string, unknown>;

/** A JSON object body or a 400; `optional` lets an absent body stand for `{}`. */
/**
 * The parsed body (see auth/plugin.ts: authenticated, capped, JSON) as an object. `optional`:
 * `curl -X POST -H 'Content-Type: application/json'` with no body at all means "no options".
 */
export function objectBody(body: unknown, optional = false): Body {
  if ((body === undefined || body === null || body === "") && optional) return {};
  if (!body || typeof body !== "object" || Array.isArray(body)) throw badRequest("invalid body: must be a JSON object");
  return body as Body;
}

export function rejectUnknown(body: Body, allowed: readonly string[]): void {
  const extra = Object.keys(body).find((k) => !allowed.includes(k));
  if (extra) throw badRequest(`invalid ${extra}: unknown field (allowed: ${allowed.join(", ")})`);
}

export function parseName(value: unknown): string {
  if (typeof value !== "string" || !value.trim()) throw badRequest("invalid name: must be a non-empty string");
  if (value.length > MAX_NAME_LENGTH) throw badRequest(`invalid name: must be at most ${MAX_NAME_LENGTH} characters`);
  return value;
}

export function parseEventTypes(value: unknown): string[] {
  const allowed = SUBSCRIBABLE_EVENT_TYPES as readonly string[];
  const message = `invalid event_types: must be a non-empty array of ${allowed.join(", ")}`;
  if (!Array.isArray(value) || value.length === 0) throw badRequest(message);
  for (const v of value) {
    if (typeof v !== "string" || !allowed.includes(v)) throw badRequest(`${message} (got ${JSON.stringify(v)})`);
  }
  return [...new Set(value as string[])];
}

/** `standard` (default) or `chat`: how monitor events are shaped for the subscription. */
export function parsePayloadFormat(value: unknown): "standard" | "chat" {
  if (value !== "standard" && value !== "chat")
    throw badRequest('invalid payload_format: must be "standard" or "chat"');
  return value;
}

export function parseUrlField(value: unknown): string {
  if (typeof value !== "string" || !value) throw badRequest("invalid url: must be a string");
  return value;
}

export function parseTtlHours(value: unknown): number {
  if (value === undefined) return DEFAULT_PREVIOUS_SECRET_TTL_HOURS;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_PREVIOUS_SECRET_TTL_HOURS) {
    throw badRequest(
      `invalid previous_secret_ttl_hours: must be an integer from 0 to ${MAX_PREVIOUS_SECRET_TTL_HOURS}`,
    );
  }
  return value;
}

/** POST /webhooks: the body as createSubscription's input, or a 400 naming the field. */
export function subscriptionInput(body: unknown) {
  const b = objectBody(body);
  rejectUnknown(b, ["trace_service_id", "name", "url", "event_types", "payload_format"]);
  if (typeof b.trace_service_id !== "string" || !b.trace_service_id)
    throw badRequest("invalid trace_service_id: must be a string");
  return {
    traceServiceId: b.trace_service_id,
    name: parseName(b.name),
    url: parseUrlField(b.url),
    eventTypes: parseEventTypes(b.event_types),
    payloadFormat: b.payload_format === undefined ? undefined : parsePayloadFormat(b.payload_format),
  };
}

/** PUT /webhooks/{id}: the body as updateSubscription's patch (at least one field). */
export function subscriptionPatch(body: unknown) {
  const b = objectBody(body);
  rejectUnknown(b, ["name", "url", "event_types", "payload_format"]);
  if (Object.keys(b).length === 0) throw badRequest("invalid body: give at least one of name, url, event_types");
  return {
    name: b.name === undefined ? undefined : parseName(b.name),
    url: b.url === undefined ? undefined : parseUrlField(b.url),
    eventTypes: b.event_types === undefined ? undefined : parseEventTypes(b.event_types),
    payloadFormat: b.payload_format === undefined ? undefined : parsePayloadFormat(b.payload_format),
  };
}

/** POST /webhooks/{id}/rotate-secret: the previous secret's window in hours (optional body). */
export function rotationTtl(body: unknown): number {
  const b = objectBody(body, true);
  rejectUnknown(b, ["previous_secret_ttl_hours"]);
  return parseTtlHours(b.previous_secret_ttl_hours);
}

/** POST /webhooks/{id}/test: the event type asked for, if any (optional body). */
export function testEventType(body: unknown): WebhookEventType | undefined {
  const b = objectBody(body, true);
  rejectUnknown(b, ["event_type"]);
  if (b.event_type !== undefined && !(MATURED_EVENT_TYPES as readonly unknown[]).includes(b.event_type)) {
    throw badRequest(`invalid event_type: must be one of ${MATURED_EVENT_TYPES.join(", ")}`);
  }
  return b.event_type as WebhookEventType | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === "string" && UUID.test(s);
