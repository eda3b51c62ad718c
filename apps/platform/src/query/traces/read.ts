import { decodePayload } from "@cellar/shared/db/payload-codec";
import type postgres from "postgres";
import { TRACE_MATURED_AT_SQL, TRACE_STATUS_SQL } from "@cellar/shared/maturation/state";
import { prepared } from "../db.ts";
import { notFound } from "@cellar/shared/errors";
import { filteredBody } from "../../http/filters.ts";
import type { FilterSet, PagedQuery } from "../filters.ts";
import { runFiltered } from "../paged.ts";
import { iso } from "../../http/schemas.ts";
import { EVENT_COLUMNS, eventOut, SPAN_COLUMNS, spanOut, TRACE_COLUMNS, traceSummaryOut } from "../../traces/model.ts";
import { spanIdKey } from "@cellar/shared/spans";
import { TRACE_METRICS_SQL, traceMetricBaseValueSql, traceMetricSource } from "@cellar/shared/db/trace-metrics";
import { derivedSpanCount, derivedSpanRows, spansOfTrace, TRACE_FOR_SPANS, type TraceForSpans } from "./spans.ts";
import type { ServiceRef } from "../../auth/principal.ts";
import { listScores } from "../../scores/service.ts";
import { traceCost } from "@cellar/shared/pricing/breakdown";
import { DEFAULT_PRICE_BOOK } from "@cellar/shared/pricing/table";
import { loadPriceBooks } from "@cellar/shared/pricing/tenant";

/**
 * The trace with its request and responses as ingested, usage, cost and metrics. Its three
 * statements (the row, the tenant's price book, the scores) go out together: in a snapshot
 * (query/traces.ts) they are pipelined on its one connection and agree with each other.
 */
export async function readTrace(
  sql: postgres.Sql | postgres.TransactionSql,
  svc: ServiceRef,
  traceId: string,
  tenantId?: string,
) {
  const [[r], books, scores] = await Promise.all([
    prepared(
      sql,
      `select ${TRACE_COLUMNS}, (select z.payload_z from trace_payloads z where z.tenant_id = tr.tenant_id and z.trace_pk = tr.id) as payload_z, tr.payload->'request' as request, tr.payload->'responses' as responses, ${TRACE_METRICS_SQL} as metrics,
       (select count(*) from spans sp where sp.trace_pk = tr.id)::int as span_count
     from traces tr left join trace_analyses ta on ta.trace_pk = tr.id
     where tr.trace_service_id = $1 and tr.trace_id = $2`,
      [svc.id, traceId],
    ),
    tenantId ? loadPriceBooks(sql, [tenantId]) : null,
    // Additive (docs/scores.md): the trace's scores, oldest first.
    listScores(sql, svc, { traceId }),
  ]);
  if (!r) throw notFound("no such trace");
  // Rows since migration 0015 carry the payload deflated; older ones as jsonb (shared/db/payload-codec.ts).
  const payload = r.payload_z ? decodePayload(r) : { request: r.request, responses: r.responses };
  // Additive (docs/pricing.md, "Cost breakdown"): each call's cost as lines, with the tenant's book.
  const book = books && tenantId ? books(tenantId) : DEFAULT_PRICE_BOOK;
  const cost = traceCost(book, { ...payload, provider: r.provider }, new Date(r.start_time), new Date(r.end_time));
  return {
    ...traceSummaryOut(r, svc.name),
    request: payload.request ?? null,
    responses: payload.responses ?? [],
    metrics: r.metrics ?? null,
    // Stored span rows of a trace written before migration 0017, else the spans its payload derives.
    spanCount: r.span_count || derivedSpanCount({ id: "", trace_id: r.trace_id, session_id: r.session_id, payload }),
    scores,
    cost,
  };
}

async function tracePk(
  sql: postgres.Sql | postgres.TransactionSql,
  svc: ServiceRef,
  traceId: string,
): Promise<string | null> {
  const [r] = await sql<
    { id: string }[]
  >`select id from traces where trace_service_id = ${svc.id} and trace_id = ${traceId}`;
  return r?.id ?? null;
}

export async function traceSpans(sql: postgres.Sql | postgres.TransactionSql, svc: ServiceRef, traceId: string) {
  const [trace] = await prepared<TraceForSpans>(
    sql,
    `select ${TRACE_FOR_SPANS} from traces tr where tr.trace_service_id = $1 and tr.trace_id = $2`,
    [svc.id, traceId],
  );
  if (!trace) throw notFound("no such trace");
  const rows = await spansOfTrace(sql, trace);
  return { traceId, serviceName: svc.name, spans: rows.map((r) => spanOut(r, svc.name)) };
}

/** Events that name the trace (`trace_id` on the event payload). 404 only if neither exists. */
export async function traceEvents(sql: postgres.Sql | postgres.TransactionSql, svc: ServiceRef, traceId: string) {
  const rows = await prepared(
    sql,
    `select ${EVENT_COLUMNS} from events e where e.trace_service_id = $1 and e.trace_id = $2 order by e.timestamp, e.id limit 5000`,
    [svc.id, traceId],
  );
  if (rows.length === 0 && !(await tracePk(sql, svc, traceId))) throw notFound("no such trace");
  return { traceId, serviceName: svc.name, events: rows.map((r) => eventOut(r, svc.name)) };
}

/**
 * A span by id across the candidate services (ids are unique per service): a stored row of a
 * trace written before migration 0017, or the span derived from the trace whose id list holds it
 * (`span_ids` rows of traces written before migration 0022, `traces.span_keys` since).
 */
export async function findSpans(sql: postgres.Sql | postgres.TransactionSql, services: ServiceRef[], spanId: string) {
  if (services.length === 0) return [];
  const names = new Map(services.map((s) => [s.id, s.name]));
  const ids = services.map((s) => s.id);
  const stored = await prepared(
    sql,
    `select ${SPAN_COLUMNS}, sp.trace_service_id from spans sp where sp.trace_service_id = any($1::uuid[]) and sp.span_id = $2`,
    [ids, spanId],
  );
  const out = stored.map((r) => spanOut(r, names.get(r.trace_service_id)!));
  const key = spanIdKey(spanId);
  if (!key) return out;
  const traces = await prepared<TraceForSpans & { trace_service_id: string }>(
    sql,
    `select ${TRACE_FOR_SPANS}, k.trace_service_id from span_ids k join traces tr on tr.id = k.trace_pk
     where k.trace_service_id = any($1::uuid[]) and k.span_id = $2::int8
     union all
     select ${TRACE_FOR_SPANS}, tr.trace_service_id from traces tr where tr.span_keys @> array[$2::int8] and tr.trace_service_id = any($1::uuid[])`,
    [ids, key],
  );
  for (const t of traces) {
    const span = derivedSpanRows(t).find((s) => s.span_id === spanId);
    if (span) out.push(spanOut(span, names.get(t.trace_service_id)!));
  }
  return out;
}

/** Trace metrics are written once at trace maturation; before that `processing` with null metrics. */
export async function findTraceMetrics(
  sql: postgres.Sql | postgres.TransactionSql,
  services: ServiceRef[],
  traceId: string,
) {
  if (services.length === 0) return [];
  const names = new Map(services.map((s) => [s.id, s.name]));
  const rows = await sql`
    select tr.trace_service_id, tr.trace_id, ta.computed_at, ta.cost_usd, ${sql.unsafe(TRACE_METRICS_SQL)} as metrics
    from traces tr left join trace_analyses ta on ta.trace_pk = tr.id
    where tr.trace_service_id = any(${services.map((s) => s.id)}::uuid[]) and tr.trace_id = ${traceId}`;
  return rows.map((r) => ({
    traceId: r.trace_id,
    serviceName: names.get(r.trace_service_id)!,
    status: r.computed_at ? ("complete" as const) : ("processing" as const),
    computedAt: iso(r.computed_at),
    costUsd: r.cost_usd ?? null,
    metrics: r.metrics ?? null,
  }));
}
