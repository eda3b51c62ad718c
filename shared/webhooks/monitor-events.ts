import { canonicalJson } from "../crypto.ts";
import { MATURED_EVENT_TYPES, MONITOR_EVENT_TYPES } from "../payloads.ts";

/**
 * Webhook event types beyond the contract's two (docs/monitors.md): a subscription opts into
 * `monitor.triggered` / `monitor.resolved` by listing them; existing subscriptions, which list
 * only `session.matured` / `trace.matured`, get nothing new.
 */
export { MONITOR_EVENT_TYPES };
export type MonitorWebhookEventType = (typeof MONITOR_EVENT_TYPES)[number];

/** Every type a subscription may list: the contract's two, then the monitor events. */
export const SUBSCRIBABLE_EVENT_TYPES = [...MATURED_EVENT_TYPES, ...MONITOR_EVENT_TYPES] as const;

/**
 * The delivery body of a monitor event: the contract's envelope (`data`, `id`, `timestamp`,
 * `type`, keys sorted at every level), serialized once at enqueue and signed as stored.
 */
export function monitorDeliveryBody(input: {
  id: string;
  type: MonitorWebhookEventType;
  timestamp: Date;
  data: Record<string, unknown>;
}): string {
  return canonicalJson({ id: input.id, type: input.type, timestamp: input.timestamp.toISOString(), data: input.data });
}
