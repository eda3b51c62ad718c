import type { KindInsert, MessageOf, Placed, Tx } from "./kind-types.ts";

type EventMessage = MessageOf<"event">;

/** The event kind's writer: one row per event, ON CONFLICT DO NOTHING by service and event key. */
export async function insertEvents(tx: Tx, placed: Placed<EventMessage>[]): Promise<KindInsert> {
  const rows = placed.map(({ message: m, servicePk, sessionPk }) => {
    const p = m.payload;
    return {
      tenant_id: m.tenantId,
      trace_service_id: servicePk,
      session_pk: sessionPk,
      session_id: p.session_id,
      trace_id: p.trace_id ?? null,
      event_key: m.messageId,
      name: p.name,
      timestamp: p.timestamp,
      severity_number: p.severity_number ?? null,
      attributes: p.attributes ?? {},
      body: p.body ?? null,
      environment: p.environment ?? null,
    };
  });
  const inserted = await tx<{ session_pk: string; at_ms: number }[]>`
    insert into events (tenant_id, trace_service_id, session_pk, session_id, trace_id, event_key, name, timestamp, severity_number, attributes, body, environment)
    select tenant_id, trace_service_id, session_pk, session_id, trace_id, event_key, name, timestamp, severity_number, attributes, body, environment
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, session_pk uuid, session_id text,
      trace_id text, event_key text, name text, timestamp timestamptz, severity_number int, attributes jsonb, body jsonb, environment text)
    order by trace_service_id, event_key
    on conflict (trace_service_id, event_key, tenant_id) do nothing
    returning session_pk, (extract(epoch from timestamp) * 1000)::float8 as at_ms`;
  return { activity: inserted.map((e) => ({ sessionPk: e.session_pk, first: e.at_ms, last: e.at_ms })) };
}
