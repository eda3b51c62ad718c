import type postgres from "postgres";
/**
 * A trace's metrics as stored (migration 0021): `trace_analyses.metrics` in full on rows written
 * before it (and on the rare row whose metrics its trace row cannot rebuild), else
 * `metrics_delta`, what differs from `trace_metrics_base` of the trace row and `cost_usd`,
 * rebuilt by `trace_metrics_restore`. Every read of a trace's metrics goes through these.
 */

/**
 * `trace_metrics_base` of trace row `t` and cost `cost`. Token sums as the trace reads answer
 * them: the row's columns, or on a row written before migration 0015 and not yet backfilled, the
 * sums over its jsonb payload's responses (the columns the backfill then writes are the same sums).
 */
export const traceMetricsBaseSql = (t: string, cost: string): string => {
  const tokens = (key: string) =>
    `coalesce(${t}.${key}, (select sum((r->'usage'->>'${key}')::bigint) from jsonb_array_elements(${t}.payload->'responses') r)::int8)`;
  return `trace_metrics_base(${t}.model, ${t}.start_time, ${t}.end_time, ${tokens("prompt_tokens")}, ${tokens("completion_tokens")}, ${tokens("total_tokens")}, ${cost})`;
};
const BASE_OF = (t: string) => traceMetricsBaseSql(t, "ta.cost_usd");

/** Over `traces tr left join trace_analyses ta`: the trace's metrics (null before its analysis). */
export const TRACE_METRICS_SQL = `(case when ta.metrics is not null then ta.metrics when ta.trace_pk is not null then trace_metrics_restore(ta.metrics_delta, ${BASE_OF("tr")}) end)`;

/** Over `trace_analyses ta` alone (a count on the analyses): the same, reading its trace by key. */
export const ANALYSIS_METRICS_SQL = `coalesce(ta.metrics, (select trace_metrics_restore(ta.metrics_delta, ${BASE_OF("t")}) from traces t where t.id = ta.trace_pk and t.tenant_id = ta.tenant_id))`;

/** The keys `trace_metrics_base` sets: any other key is in `metrics` or `metrics_delta` as it is. */
export const TRACE_METRICS_BASE_KEYS: ReadonlySet<string> = new Set([
  "durationMs",
  "modelCalls",
  "toolCalls",
  "promptTokens",
  "completionTokens",
  "totalTokens",
  "cachedTokens",
  "reasoningTokens",
  "latencyP50Ms",
  "latencyP95Ms",
  "latencyMaxMs",
  "costUsd",
  "costComplete",
  "pricedCostUsd",
  "unpricedModels",
  "finishReasons",
  "models",
  "priceTableVersion",
]);

/**
 * Over `trace_analyses ta` (with or without its trace joined): the jsonb to read metrics key
 * `name` from. A key the base does not set is in the stored jsonb as it is: no trace row read.
 */
export const traceMetricSource = (name: string): string =>
  TRACE_METRICS_BASE_KEYS.has(name) || name === "costByModel"
    ? ANALYSIS_METRICS_SQL
    : "coalesce(ta.metrics, ta.metrics_delta)";

/**
 * Rewrites those traces' analyses stored in full as deltas against their trace rows (migration
 * 0021's compact shape: ~870 B less per bench trace), wherever the delta rebuilds the metrics to
 * the same text; any other row stays as it is. Off the write path: done in the maturation's own
 * insert it cost ~650-800 us of Postgres execution per trace (bench/e2e.ts --pg-stats, issue 28),
 * so the writer stores metrics in full. Nothing runs it on a schedule yet; readers take both shapes.
 */
export async function compactTraceMetrics(sql: postgres.Sql | postgres.TransactionSql, tracePks: string[]) {
  if (tracePks.length === 0) return;
  await sql.unsafe(
    `with c as (
      select ta.trace_pk, ta.tenant_id, d.delta from trace_analyses ta
        join traces t on t.id = ta.trace_pk and t.tenant_id = ta.tenant_id
        cross join lateral (select ${traceMetricsBaseSql("t", "ta.cost_usd")} as base) b
        cross join lateral (select trace_metrics_delta(ta.metrics, b.base) as delta) d0
        cross join lateral (select d0.delta, trace_metrics_restore(d0.delta, b.base)::text = ta.metrics::text as same) d
      where ta.trace_pk = any($1::uuid[]) and ta.metrics is not null and not ta.metrics ? '-' and d.same)
    update trace_analyses ta set metrics = null, metrics_delta = c.delta
    from c where ta.trace_pk = c.trace_pk and ta.tenant_id = c.tenant_id`,
    [tracePks],
  );
}
