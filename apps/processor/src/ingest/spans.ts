import type postgres from "postgres";

/** Span derivation lives in shared/spans.ts: the processor writes with it, the platform reads with it. */
export { type DerivedSpan, deriveSpans, spanIdKey, stableId, traceIdFor } from "@cellar/shared/spans";

/** Where one derived span lives: `span_ids` (migration 0017), `span_id` as spanIdKey gives it. */
export interface SpanIdRow {
  tenant_id: string;
  trace_service_id: string;
  trace_pk: string;
  span_id: string;
}

/** The `span_ids` rows of new traces in one statement (a replayed id is skipped). */
export async function insertSpanIds(tx: postgres.Sql | postgres.TransactionSql, rows: SpanIdRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx`
    insert into span_ids (tenant_id, trace_service_id, span_id, trace_pk)
    select tenant_id, trace_service_id, span_id, trace_pk
    from json_to_recordset(${tx.json(rows as never)}::json) as x(tenant_id uuid, trace_service_id uuid, span_id bigint, trace_pk uuid)
    order by trace_service_id, span_id
    on conflict do nothing`;
}
