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

const shown = (v: unknown) => (typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v));

/**
 * A monitor event for a chat tool's incoming webhook (subscription `payload_format: "chat"`):
 * `{"text": "..."}`, one line a person reads. Signed and retried like every delivery; the
 * `webhook-id` header still identifies it.
 */
export function monitorChatBody(type: MonitorWebhookEventType, d: Record<string, unknown>): string {
  const what = `${d.metric}${d.metric_arg ? ` (${d.metric_arg})` : ""}`;
  const level = d.direction === "below" ? "<=" : ">=";
  const text =
    type === "monitor.triggered"
      ? `Cellar monitor "${d.monitor_name}" on ${d.service_name} is ${String(d.state).toUpperCase()}: ${what} = ${shown(d.value)} (threshold ${level} ${shown(d.threshold)}, ${d.samples} samples in ${Number(d.window_seconds) / 60} min)`
      : `Cellar monitor "${d.monitor_name}" on ${d.service_name} resolved: ${what} = ${shown(d.value)} (${d.samples} samples in ${Number(d.window_seconds) / 60} min)`;
  return canonicalJson({ text });
}
