import type postgres from "postgres";
import { decodePayload, inJsonbOrder } from "@cellar/shared/db/payload-codec";
import { deriveSpans } from "@cellar/shared/spans";
import { prepared } from "../db.ts";
import { SPAN_COLUMNS } from "../../traces/model.ts";

/**
 * A trace's spans as every read sees them (docs/otlp.md "Spans"): the `spans` rows of a trace
 * written before migration 0017, else derived from its stored payload by the function that wrote
 * those rows (shared/spans.ts). A derived span has the row's shape, attributes in jsonb's key
 * order and times as Postgres would return them, so spanOut answers it as it answered the row.
 */

/** A span in the stored row's shape, with its start as epoch ms for ordering. */
export type SpanRow = postgres.Row & { span_id: string; start_time: Date; start_ms: number };

/** What deriving a trace's spans needs from its row: the trace and its stored payload. */
export interface TraceForSpans {
  id: string;
  trace_id: string;
  session_id: string;
  payload?: unknown;
  payload_z?: Uint8Array | null;
}

/** The columns (of `traces tr`) a TraceForSpans is read from. */
export const TRACE_FOR_SPANS = `tr.id, tr.trace_id, tr.session_id, tr.payload, (select z.payload_z from trace_payloads z where z.tenant_id = tr.tenant_id and z.trace_pk = tr.id) as payload_z`;

/** Span order of every read: start time, then span id. */
export const bySpanOrder = (a: SpanRow, b: SpanRow) =>
  a.start_ms - b.start_ms || (a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0);

/** The spans derived from a trace's payload, in span order; none for a payload that cannot be read. */
export function derivedSpanRows(t: TraceForSpans): SpanRow[] {
  let spans: ReturnType<typeof deriveSpans>;
  try {
    spans = deriveSpans(t.trace_id, decodePayload(t));
  } catch {
    return [];
  }
  return spans
    .map((s) => ({
      span_id: s.spanId,
      parent_span_id: s.parentSpanId,
      trace_id: t.trace_id,
      session_id: t.session_id,
      name: s.name,
      kind: s.kind,
      start_time: s.startTime,
      end_time: s.endTime,
      attributes: inJsonbOrder(s.attributes),
      start_ms: s.startTime.getTime(),
    }))
    .sort(bySpanOrder) as SpanRow[];
}

/** The stored span rows of those traces that have any (traces written before 0017), by trace, in span order. */
export async function storedSpanRows(
  sql: postgres.Sql | postgres.TransactionSql,
  tracePks: string[],
): Promise<Map<string, SpanRow[]>> {
  const out = new Map<string, SpanRow[]>();
  if (tracePks.length === 0) return out;
  const stored = await prepared<SpanRow>(
    sql,
    `select ${SPAN_COLUMNS}, sp.trace_pk, (extract(epoch from sp.start_time) * 1000)::float8 as start_ms, sp.start_time::text as start_text
     from spans sp where sp.trace_pk = any($1::uuid[]) order by sp.start_time, sp.span_id`,
    [tracePks],
  );
  for (const r of stored) {
    const list = out.get(r.trace_pk) ?? [];
    list.push(r);
    out.set(r.trace_pk, list);
  }
  return out;
}

/** The spans of a trace, in span order: its stored rows when it has any, else derived. */
export async function spansOfTrace(sql: postgres.Sql | postgres.TransactionSql, t: TraceForSpans): Promise<SpanRow[]> {
  return (await storedSpanRows(sql, [t.id])).get(t.id) ?? derivedSpanRows(t);
}

/** How many spans a trace's payload derives (the span count of a trace without stored rows). */
export function derivedSpanCount(t: TraceForSpans): number {
  try {
    return deriveSpans(t.trace_id, decodePayload(t)).length;
  } catch {
    return 0;
  }
}
