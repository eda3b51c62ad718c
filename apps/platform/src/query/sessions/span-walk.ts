import type postgres from "postgres";
import { prepared } from "../db.ts";
import {
  bySpanOrder,
  derivedSpanRows,
  type SpanRow,
  storedSpanRows,
  TRACE_FOR_SPANS,
  type TraceForSpans,
} from "../traces/spans.ts";

/**
 * A session's spans in span order (start time, then span id) without a row per span: its traces
 * walked in start order, a batch at a time, each trace's spans stored or derived
 * (traces/spans.ts). Every span of a trace starts at or after the trace's start (to the
 * millisecond) and at or before its end, so a span is final once it starts before the next
 * trace's start, and only traces ending at or after a position can hold spans past it. Memory is
 * bounded by the spans wanted (`need`) plus one batch of traces, whatever the session's size.
 */

/** Trace rows (with their payloads) read at a time; a page of n spans needs about n / 2 traces. */
const traceBatch = (need: number) => Math.min(200, Math.max(8, Math.ceil(need / 2) + 1));

/** A position in span order: the start (epoch ms) and id of the last span already seen. */
export interface SpanPosition {
  ms: number;
  id: string;
}

const isAfter = (s: SpanRow, p: SpanPosition | null) =>
  !p || s.start_ms > p.ms || (s.start_ms === p.ms && s.span_id > p.id);

type WalkTrace = TraceForSpans & { start_ms: number; start_text: string };

/** The session's traces in start order that can hold spans after `after`, a batch at a time. */
async function* traceBatches(
  sql: postgres.Sql | postgres.TransactionSql,
  sessionPk: string,
  after: SpanPosition | null,
  batch: number,
) {
  let last: WalkTrace | null = null;
  for (;;) {
    const params: unknown[] = [sessionPk];
    let where = "tr.session_pk = $1";
    if (after) {
      params.push(after.ms);
      where += ` and tr.end_time >= to_timestamp($${params.length}::float8 / 1000)`;
    }
    if (last) {
      params.push(last.start_text, last.trace_id);
      // `::text` first: a parameter typed timestamptz goes through the driver's Date, which drops
      // the microseconds, and the last trace of the batch would come back in the next one.
      const [s, id] = [`$${params.length - 1}::text::timestamptz`, `$${params.length}::text`];
      where += ` and tr.start_time >= ${s} and (tr.start_time > ${s} or tr.trace_id > ${id})`;
    }
    const rows: WalkTrace[] = await prepared<WalkTrace>(
      sql,
      `select ${TRACE_FOR_SPANS}, (extract(epoch from tr.start_time) * 1000)::float8 as start_ms, tr.start_time::text as start_text
       from traces tr where ${where} order by tr.start_time, tr.trace_id limit ${batch}`,
      params as never[],
    );
    if (rows.length) yield rows;
    if (rows.length < batch) return;
    last = rows[rows.length - 1];
  }
}

/** Two span-ordered lists as one. */
function merge(a: SpanRow[], b: SpanRow[]): SpanRow[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: SpanRow[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(bySpanOrder(a[i], b[j]) <= 0 ? a[i++] : b[j++]);
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}

/**
 * The first `need` spans of the session after `after` (all of them from the start when null), in
 * span order. `light` keeps only each span's position (an offset walk that skips them).
 */
export async function walkSessionSpans(
  sql: postgres.Sql | postgres.TransactionSql,
  sessionPk: string,
  after: SpanPosition | null,
  need: number,
  light = false,
): Promise<SpanRow[]> {
  const out: SpanRow[] = [];
  let pending: SpanRow[] = [];
  if (need <= 0) return out;
  for await (const batch of traceBatches(sql, sessionPk, after, traceBatch(need))) {
    const stored = await storedSpanRows(
      sql,
      batch.map((t) => t.id),
    );
    for (const t of batch) {
      // Spans starting before this trace are final: no later trace can come before them.
      const frontier = Math.floor(t.start_ms);
      let cut = 0;
      while (cut < pending.length && pending[cut].start_ms < frontier && out.length < need) out.push(pending[cut++]);
      if (cut) pending = pending.slice(cut);
      if (out.length === need) return out;
      const fresh: SpanRow[] = [];
      for (const s of stored.get(t.id) ?? derivedSpanRows(t))
        if (isAfter(s, after)) fresh.push(light ? ({ span_id: s.span_id, start_ms: s.start_ms } as SpanRow) : s);
      pending = merge(pending, fresh);
      // Only the `need - out` first can be wanted: the rest is dropped (bounded memory).
      if (pending.length > need - out.length) pending.length = need - out.length;
    }
  }
  for (const s of pending) {
    if (out.length === need) break;
    out.push(s);
  }
  return out;
}
