import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { Topology } from "../../../shared/nats/topology";
import type { MaturedMessage } from "../../../shared/payloads";
import { deliveryBody, insertDeliveries, newDeliveryId, publishDeliveryJobs, type NewDelivery } from "../../../shared/webhooks/deliveries";

export interface FanoutDeps {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  now: () => Date;
}

/** The dedup key of an event: the same as the MATURED message id. */
export function eventKey(m: MaturedMessage): string {
  return `${m.type === "session.matured" ? "session" : "trace"}:${m.entityPk}:${m.maturationCount}`;
}

/**
 * One delivery per matching enabled subscription of an entitled tenant, then one DELIVERIES job
 * per delivery not attempted yet; a whole MATURED batch in three queries. Safe to replay: rows
 * are unique per (subscription, event), and a job's message id is its delivery id, so a crash
 * between insert and publish re-publishes the same job rather than making a second delivery.
 */
export async function fanOut(deps: FanoutDeps, events: MaturedMessage[]): Promise<number> {
  if (events.length === 0) return 0;
  const subs = await deps.sql<{ id: string; tenant_id: string; trace_service_id: string; event_types: string[] }[]>`
    select s.id, s.tenant_id, s.trace_service_id, s.event_types
    from webhook_subscriptions s join tenants t on t.id = s.tenant_id
    where s.trace_service_id = any(${[...new Set(events.map((m) => m.traceServiceId))]}::uuid[]) and s.enabled and t.webhooks_enabled`;
  if (subs.length === 0) return 0;
  const timestamp = deps.now();
  const rows: NewDelivery[] = [];
  for (const m of events) {
    const data = {
      tenant_id: m.tenantId,
      trace_service_id: m.traceServiceId,
      service_name: m.serviceName,
      maturation_count: m.maturationCount,
      occurred_at: m.occurredAt,
      ...(m.type === "session.matured" ? { session_id: m.sessionId } : { trace_id: m.traceId }),
    };
    for (const s of subs) {
      if (s.tenant_id !== m.tenantId || s.trace_service_id !== m.traceServiceId || !s.event_types.includes(m.type)) continue;
      const id = newDeliveryId();
      rows.push({ id, tenant_id: m.tenantId, subscription_id: s.id, event_type: m.type, event_key: eventKey(m), body: deliveryBody({ id, type: m.type, timestamp, data }), enqueued_at: timestamp });
    }
  }
  if (rows.length === 0) return 0;
  const inserted = await insertDeliveries(deps.sql, rows);
  let ids = inserted;
  if (inserted.length < rows.length) {
    // Some already existed (a replay): re-publish those not attempted yet, in case the crash
    // came between their insert and their publish. The job's msgID drops true duplicates.
    const existing = await deps.sql<{ id: string }[]>`
      select id from webhook_deliveries
      where event_key = any(${[...new Set(rows.map((r) => r.event_key))]}::text[])
        and subscription_id = any(${[...new Set(rows.map((r) => r.subscription_id))]}::uuid[])
        and status = 'pending' and attempts = 0`;
    ids = existing.map((r) => r.id);
  }
  await publishDeliveryJobs(deps.js, deps.topology, ids.map((id) => ({ job: { deliveryId: id }, msgID: id })));
  return ids.length;
}
