import type { KindInsert, MessageOf, Placed, Tx } from "./kind-types.ts";
import { rowTimes, settleAfterLookup } from "./stored.ts";

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
  const inserted = await tx<{ session_pk: string; event_key: string; trace_service_id: string; at_ms: number }[]>`
    insert into events (tenant_id, trace_service_id, session_pk, session_id, trace_id, event_key, name, timestamp, severity_number, attributes, body, environment)
    select tenant_id, trace_service_id, session_pk, session_id, trace_id, event_key, name, timestamp, severity_number, attributes, body, environment
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, session_pk uuid, session_id text,
      trace_id text, event_key text, name text, timestamp timestamptz, severity_number int, attributes jsonb, body jsonb, environment text)
    order by trace_service_id, event_key
    on conflict (trace_service_id, event_key, tenant_id) do nothing
    returning session_pk, event_key, trace_service_id, (extract(epoch from timestamp) * 1000)::float8 as at_ms`;
  return {
    activity: inserted.map((e) => ({ sessionPk: e.session_pk, first: e.at_ms, last: e.at_ms })),
    settled: (tx) =>
      settledEvents(
        tx,
        rows,
        new Set(inserted.map((e) => keyOf(e.trace_service_id, e.event_key))),
        placed.map((p) => Date.parse(p.message.receivedAt)),
      ),
  };
}

/** How far Postgres's clock may lag ingest's before a row written again reads as another copy's. */
const COPY_SKEW_MS = 60_000;

const keyOf = (serviceId: string, eventKey: string) => `${serviceId}\u0000${eventKey}`;

/**
 * What the write did with each event (stored.ts). An event's key is its content's hash, and its
 * row keeps when it was written (Postgres's clock), not received (ingest's): a row written well
 * before this copy was received (COPY_SKEW_MS, for the two clocks) is another copy's (a
 * duplicate), else this copy's (written again). The lookup runs only when some row was already there.
 */
function settledEvents(
  tx: Tx,
  rows: Array<{ tenant_id: string; trace_service_id: string; event_key: string }>,
  inserted: Set<string>,
  receivedMs: number[],
) {
  const items = rows.map((e, i) => ({ key: keyOf(e.trace_service_id, e.event_key), receivedMs: receivedMs[i] }));
  const same = (writtenMs: number, itemMs: number) => writtenMs + COPY_SKEW_MS >= itemMs;
  return settleAfterLookup(items, inserted, same, (there) =>
    rowTimes(
      tx,
      { table: "events", key: "event_key", at: "ingested_at" },
      there.map((i) => ({ service: rows[i].trace_service_id, key: rows[i].event_key, tenant: rows[i].tenant_id })),
    ),
  );
}
