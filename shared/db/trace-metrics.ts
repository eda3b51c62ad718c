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
