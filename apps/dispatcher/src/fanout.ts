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
 * per delivery that has not been attempted yet. Safe to replay: rows are unique per
 * (subscription, event), and the job's message id is the delivery id, so a crash between the
 * insert and the publish re-publishes the same job rather than a second delivery.
 */
export async function fanOut(deps: FanoutDeps, m: MaturedMessage): Promise<number> {
  const key = eventKey(m);
  const subs = await deps.sql<{ id: string }[]>`
    select s.id from webhook_subscriptions s join tenants t on t.id = s.tenant_id
    where s.tenant_id = ${m.tenantId} and s.trace_service_id = ${m.traceServiceId}
      and s.enabled and t.webhooks_enabled and ${m.type} = any(s.event_types)`;
  if (subs.length === 0) return 0;
  const timestamp = deps.now();
  const data = {
    tenant_id: m.tenantId,
    trace_service_id: m.traceServiceId,
    service_name: m.serviceName,
    maturation_count: m.maturationCount,
    occurred_at: m.occurredAt,
    ...(m.type === "session.matured" ? { session_id: m.sessionId } : { trace_id: m.traceId }),
  };
  const rows: NewDelivery[] = subs.map((s) => {
    const id = newDeliveryId();
    return { id, tenant_id: m.tenantId, subscription_id: s.id, event_type: m.type, event_key: key, body: deliveryBody({ id, type: m.type, timestamp, data }), enqueued_at: timestamp };
  });
  await insertDeliveries(deps.sql, rows);
  const fresh = await deps.sql<{ id: string }[]>`
    select id from webhook_deliveries
    where event_key = ${key} and subscription_id = any(${subs.map((s) => s.id)}::uuid[]) and status = 'pending' and attempts = 0`;
  await publishDeliveryJobs(deps.js, deps.topology, fresh.map((r) => ({ job: { deliveryId: r.id }, msgID: r.id })));
  return fresh.length;
}
