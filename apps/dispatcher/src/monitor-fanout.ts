import { monitorEventKey, type MonitorEventMessage } from "@cellar/shared/payloads";
import { newDeliveryId } from "@cellar/shared/webhooks/deliveries";
import * as deliveryState from "@cellar/shared/webhooks/delivery-state";
import { monitorChatBody, monitorDeliveryBody } from "@cellar/shared/webhooks/monitor-events";
import type { FanoutDeps, PendingDelivery } from "./fanout.ts";

/**
 * A monitor event (docs/monitors.md) to one delivery per enabled subscription of its service that
 * lists its type, for entitled tenants: the same rows, signing, attempts and retry curve as a
 * maturation's. Unique per (subscription, `monitor:<id>:<seq>`), so an outbox row published
 * twice (a processor crash, the relay) is delivered once. Returns the event's pending
 * deliveries, `fresh` when inserted here (the caller's ownership rule: ownedBy in matured.ts).
 */
export async function fanOutMonitorEvent(deps: FanoutDeps, event: MonitorEventMessage): Promise<PendingDelivery[]> {
  const subs = await deps.sql<{ id: string; payload_format: string }[]>`
    select s.id, s.payload_format from webhook_subscriptions s join tenants t on t.id = s.tenant_id
    where s.trace_service_id = ${event.traceServiceId} and s.tenant_id = ${event.tenantId} and s.enabled
      and t.webhooks_enabled and ${event.type} = any(s.event_types)`;
  if (subs.length === 0) return [];
  const timestamp = deps.now();
  const key = monitorEventKey(event);
  const leasedUntil = new Date(timestamp.getTime() + deps.attemptLeaseMs);
  const inserted = new Set(
    await deliveryState.insert(
      deps.sql,
      subs.map((s) => {
        const id = newDeliveryId();
        return {
          id,
          tenant_id: event.tenantId,
          subscription_id: s.id,
          event_type: event.type,
          event_key: key,
          body:
            s.payload_format === "chat"
              ? monitorChatBody(event.type, event.data)
              : monitorDeliveryBody({ id, type: event.type, timestamp, data: event.data }),
          enqueued_at: timestamp,
        };
      }),
      leasedUntil,
    ),
  );
  const pending = await deps.sql<{ id: string; attempts: number }[]>`
    select id, attempts from webhook_deliveries
    where event_key = ${key} and subscription_id = any(${subs.map((s) => s.id)}::uuid[]) and status = 'pending'`;
  return pending.map((r) => ({
    id: r.id,
    eventKey: key,
    tenantId: event.tenantId,
    attempts: r.attempts,
    fresh: inserted.has(r.id),
    leasedUntil: inserted.has(r.id) ? leasedUntil : undefined,
  }));
}
