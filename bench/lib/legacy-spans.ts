import type postgres from "postgres";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { deriveSpans } from "@cellar/shared/spans";

/** A stored trace, as much of it as its span rows of before migration 0017 need. */
export interface LegacyTrace {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  session_pk: string;
  trace_id: string;
  session_id: string;
  payload_z: Uint8Array;
}

/**
 * Spans as the writer before migration 0017 stored them: one `spans` row per derived span, with
 * its very insert statement (for test/upgrade-spans.test.ts), and no span ids
 * on the trace row (migration 0022).
 */
export async function insertLegacySpanRows(sql: postgres.Sql, traces: LegacyTrace[]): Promise<number> {
  const rows = traces.flatMap((t) =>
    deriveSpans(t.trace_id, decodePayload(t) as never).map((s) => ({
      tenant_id: t.tenant_id,
      trace_service_id: t.trace_service_id,
      session_pk: t.session_pk,
      trace_pk: t.id,
      trace_id: t.trace_id,
      session_id: t.session_id,
      span_id: s.spanId,
      parent_span_id: s.parentSpanId,
      name: s.name,
      kind: s.kind,
      start_time: s.startTime.toISOString(),
      end_time: s.endTime.toISOString(),
      attributes: s.attributes,
    })),
  );
  if (rows.length === 0) return 0;
  await sql`
    insert into spans (tenant_id, trace_service_id, session_pk, trace_pk, span_id, parent_span_id, trace_id, session_id, name, kind, start_time, end_time, attributes)
    select tenant_id, trace_service_id, session_pk, trace_pk, span_id, parent_span_id, trace_id, session_id, name, kind, start_time, end_time, attributes
    from json_to_recordset(${sql.json(rows as never)}::json) as x(tenant_id uuid, trace_service_id uuid, session_pk uuid, trace_pk uuid, span_id text,
      parent_span_id text, trace_id text, session_id text, name text, kind text, start_time timestamptz, end_time timestamptz, attributes jsonb)
    order by trace_service_id, span_id
    on conflict do nothing`;
  await sql`update traces set span_keys = null where id = any(${traces.map((t) => t.id)}::uuid[]) and span_keys is not null`;
  return rows.length;
}

/** The stored traces as insertLegacySpanRows takes them, in trace id order. */
export const legacyTraces = (sql: postgres.Sql) =>
  sql<LegacyTrace[]>`select t.id, t.tenant_id, t.trace_service_id, t.session_pk, t.trace_id, t.session_id, z.payload_z
    from traces t join trace_payloads z on z.trace_pk = t.id order by t.trace_id, t.id`;

/**
 * Span ids as the writer between migrations 0017 and 0022 stored them: one `span_ids` row per id,
 * none on the trace row (for the upgrade tests).
 */
export async function storeSpanIdRows(sql: postgres.Sql, tracePks: string[]): Promise<number> {
  const moved = await sql`
    insert into span_ids (tenant_id, trace_service_id, span_id, trace_pk)
    select t.tenant_id, t.trace_service_id, k.span_id, t.id from traces t cross join unnest(t.span_keys) as k(span_id)
    where t.id = any(${tracePks}::uuid[]) order by t.trace_service_id, k.span_id
    on conflict do nothing`;
  await sql`update traces set span_keys = null where id = any(${tracePks}::uuid[])`;
  return moved.count;
}
