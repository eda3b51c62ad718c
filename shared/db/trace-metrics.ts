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
export const traceMetricsBaseSql = (t: string, cost: string): string =>
  `trace_metrics_base(${t}.model, ${t}.start_time, ${t}.end_time, ${baseTokensSql(t, "prompt_tokens")}, ${baseTokensSql(t, "completion_tokens")}, ${baseTokensSql(t, "total_tokens")}, ${cost})`;
/** Over trace row `t`: token sum `key` over its jsonb payload's responses (null without any). */
const payloadUsageSumSql = (t: string, key: string) =>
  `(select sum((r->'usage'->>'${key}')::bigint) from jsonb_array_elements(${t}.payload->'responses') r)`;
/** The base's token sum: the row's column, else the payload's sum (null without any). */
const baseTokensSql = (t: string, key: string) => `coalesce(${t}.${key}, ${payloadUsageSumSql(t, key)}::int8)`;
/**
 * Over trace row `t`: its token sum `key` as the trace reads answer it: the row's column, or on a
 * row written before migration 0015 and not yet backfilled, the sum over its jsonb payload's
 * responses (0 without any).
 */
export const traceUsageSumSql = (t: string, key: string): string =>
  `coalesce(${t}.${key}, coalesce(${payloadUsageSumSql(t, key)}, 0))::int8`;
const BASE_OF = (t: string) => traceMetricsBaseSql(t, "ta.cost_usd");

/** Over `traces tr left join trace_analyses ta`: the trace's metrics (null before its analysis). */
export const TRACE_METRICS_SQL = `(case when ta.metrics is not null then ta.metrics when ta.trace_pk is not null then trace_metrics_restore(ta.metrics_delta, ${BASE_OF("tr")}) end)`;

/** Over `trace_analyses ta` alone (a count on the analyses): the same, reading its trace by key. */
export const ANALYSIS_METRICS_SQL = `coalesce(ta.metrics, (select trace_metrics_restore(ta.metrics_delta, ${BASE_OF("t")}) from traces t where t.id = ta.trace_pk and t.tenant_id = ta.tenant_id))`;

/** `trace_metrics_base`'s value of each key, over `trace_analyses ta` and its trace row `t`: its keys are the base's. */
const DURATION = "to_jsonb(trim_scale(extract(epoch from t.end_time - t.start_time) * 1000))";
const tokens = (key: string) => `coalesce(to_jsonb(${baseTokensSql("t", key)}), 'null'::jsonb)`;
const BASE_VALUE: Record<string, { expr: string; row: boolean }> = {
  durationMs: { expr: DURATION, row: true },
  latencyP50Ms: { expr: DURATION, row: true },
  latencyP95Ms: { expr: DURATION, row: true },
  latencyMaxMs: { expr: DURATION, row: true },
  promptTokens: { expr: tokens("prompt_tokens"), row: true },
  completionTokens: { expr: tokens("completion_tokens"), row: true },
  totalTokens: { expr: tokens("total_tokens"), row: true },
  models: { expr: "jsonb_build_array(coalesce(t.model, 'unknown'))", row: true },
  unpricedModels: {
    expr: "(case when ta.cost_usd is null then jsonb_build_array(coalesce(t.model, 'unknown')) else '[]'::jsonb end)",
    row: true,
  },
  modelCalls: { expr: "'1'::jsonb", row: false },
  toolCalls: { expr: "'0'::jsonb", row: false },
  cachedTokens: { expr: "'0'::jsonb", row: false },
  reasoningTokens: { expr: "'0'::jsonb", row: false },
  costUsd: { expr: "coalesce(to_jsonb(ta.cost_usd), 'null'::jsonb)", row: false },
  costComplete: { expr: "to_jsonb(ta.cost_usd is not null)", row: false },
  pricedCostUsd: { expr: "to_jsonb(coalesce(ta.cost_usd, 0))", row: false },
  finishReasons: { expr: `'{"stop": 1}'::jsonb`, row: false },
  priceTableVersion: { expr: `'"2026-11-25"'::jsonb`, row: false },
};

/** The keys `trace_metrics_base` sets: any other key is in `metrics` or `metrics_delta` as it is. */
export const TRACE_METRICS_BASE_KEYS: ReadonlySet<string> = new Set(Object.keys(BASE_VALUE));

/**
 * Over `trace_analyses ta` (with or without its trace joined): metrics key `name` of the base's
 * (TRACE_METRICS_BASE_KEYS) as jsonb, what `TRACE_METRICS_SQL -> name` answers, without
 * rebuilding the whole object: the full metrics' value, else absent where the delta lists it
 * under `-`, else the delta's value, else the base's for that key alone (from `cost_usd`, or the
 * trace row read by key). `trace_metrics_restore` per candidate row made a trace list filtered
 * on such a key cost ~230 us of Postgres a row (239 ms a page at 3 million traces,
 * docs/performance.md). Null for any other key (read as traceMetricSource says).
 */
export function traceMetricBaseValueSql(name: string): string | null {
  if (!Object.hasOwn(BASE_VALUE, name)) return null;
  const base = BASE_VALUE[name];
  const key = `'${name}'`; // one of the keys above: no quoting needed
  const value = base.row
    ? `(select ${base.expr} from traces t where t.id = ta.trace_pk and t.tenant_id = ta.tenant_id)`
    : base.expr;
  return `(case when ta.metrics is not null then ta.metrics -> ${key} when ta.trace_pk is null then null
    when coalesce(ta.metrics_delta -> '-', '[]'::jsonb) ? ${key} then null
    when ta.metrics_delta ? ${key} then ta.metrics_delta -> ${key} else ${value} end)`;
}

/**
 * Over `trace_analyses ta` (with or without its trace joined): the jsonb to read metrics key
 * `name` from. A key the base does not set is in the stored jsonb as it is: no trace row read.
 * (A key the base sets reads faster through traceMetricBaseValueSql.)
 */
export const traceMetricSource = (name: string): string =>
  TRACE_METRICS_BASE_KEYS.has(name) || name === "costByModel"
    ? ANALYSIS_METRICS_SQL
    : "coalesce(ta.metrics, ta.metrics_delta)";

/**
 * Moves trace analyses stored with their metrics in full (every row written before the maturation
 * wrote deltas itself) to migration 0021's compact shape: the table walked a range of pages at a
 * time in heap order (a TID range scan: in key order every row was on another page), up to its
 * size at the start (rows written since are deltas), each delta built as the maturation builds it
 * (storedTraceMetrics) and written only where Postgres' own `trace_metrics_restore` rebuilds the
 * stored metrics from it, checked in the update itself: a row it would not rebuild stays in full.
 * Readers take both shapes, so answers are the same before, during and after. Analyses are written
 * once, so no lock is taken: two runs write the same delta. An operator's command, not run at
 * start: each row's new version is written elsewhere in the table (the pages are full), so the
 * table first grows by what it compacts and only new rows reuse the space (`npm run admin --
 * storage compact-metrics`, docs/operations.md). Returns the rows compacted.
 */
export async function compactStoredMetrics(
  sql: postgres.Sql | postgres.TransactionSql,
  o: { pages?: number; pauseMs?: number; stopped?: () => boolean } = {},
): Promise<number> {
  const pages = o.pages ?? 64;
  const [{ last }] = await sql<{ last: number }[]>`
    select (pg_relation_size('trace_analyses') / current_setting('block_size')::int)::int as last`;
  let compacted = 0;
  for (let page = 0; page < last; page += pages) {
    if (o.stopped?.()) return compacted;
    const rows = await sql<
      ({
        trace_pk: string;
        tenant_id: string;
        cost_usd: number | null;
        metrics: Record<string, unknown>;
      } & TraceMetricsBaseFields)[]
    >`
      select ta.trace_pk, ta.tenant_id, ta.cost_usd, ta.metrics, ${sql.unsafe(traceMetricsBaseFieldsSql("t"))}
      from trace_analyses ta join traces t on t.id = ta.trace_pk and t.tenant_id = ta.tenant_id
      where ta.ctid >= ${`(${page},0)`}::tid and ta.ctid < ${`(${page + pages},0)`}::tid and ta.metrics is not null`;
    const deltas = rows.flatMap((r) => {
      const stored = storedTraceMetrics(r.metrics, r.cost_usd, r);
      return stored.metrics ? [] : [{ trace_pk: r.trace_pk, tenant_id: r.tenant_id, delta: stored.delta }];
    });
    if (deltas.length === 0) continue;
    const done = await sql`
      update trace_analyses ta set metrics = null, metrics_delta = x.delta
      from jsonb_to_recordset(${sql.json(deltas as never)}::jsonb) as x(trace_pk uuid, tenant_id uuid, delta jsonb),
        traces t
      where ta.trace_pk = x.trace_pk and ta.tenant_id = x.tenant_id and ta.metrics is not null
        and t.id = ta.trace_pk and t.tenant_id = ta.tenant_id
        and trace_metrics_restore(x.delta, ${sql.unsafe(traceMetricsBaseSql("t", "ta.cost_usd"))}) = ta.metrics`;
    compacted += done.count;
    if (o.pauseMs) await new Promise((r) => setTimeout(r, o.pauseMs));
  }
  return compacted;
}

/**
 * Over trace row `t`: what `trace_metrics_base` reads of it, as Postgres prints it, for
 * storedTraceMetrics (the writer's delta). Texts, not numbers: the delta may leave a key out only
 * where the metrics' value is exactly the base's.
 */
export const traceMetricsBaseFieldsSql = (t: string): string =>
  `${t}.model as base_model, trim_scale(extract(epoch from ${t}.end_time - ${t}.start_time) * 1000)::text as base_duration_ms,
  ${baseTokensSql(t, "prompt_tokens")}::text as base_prompt_tokens, ${baseTokensSql(t, "completion_tokens")}::text as base_completion_tokens,
  ${baseTokensSql(t, "total_tokens")}::text as base_total_tokens`;

/** A trace row's base fields, selected by traceMetricsBaseFieldsSql. */
export interface TraceMetricsBaseFields {
  base_model: string | null;
  base_duration_ms: string | null;
  base_prompt_tokens: string | null;
  base_completion_tokens: string | null;
  base_total_tokens: string | null;
}

/** `trace_metrics_base`'s constant price table version (migration 0021: the function never changes). */
const BASE_PRICE_TABLE_VERSION = "2026-11-25";

/**
 * A trace's metrics as the writer stores them (migration 0021's compact shape, computed here
 * rather than by `trace_metrics_delta` in SQL, which cost ~650-800 us of Postgres per trace):
 * `delta` holds every key whose value is not certainly the base's, `-` the base's keys the metrics
 * lack, and `costByModel` unless it is certainly the one entry the top level implies. A key is
 * left out only where its value is known to equal, as jsonb, what `trace_metrics_base` builds from
 * the same trace row and `costUsd` (the `cost_usd` written beside it): numbers compared by the
 * text Postgres prints for the base, so `trace_metrics_restore(delta, base)` rebuilds the metrics
 * exactly (test/upgrade-storage-shape.test.ts checks it as a property against Postgres). Metrics
 * with a key `-` (the delta's own), or that are not an object, are stored in full, and so are
 * metrics whose delta would not be shorter than they are.
 */
export function storedTraceMetrics(
  metrics: Record<string, unknown>,
  costUsd: number | null,
  row: TraceMetricsBaseFields,
): { metrics: Record<string, unknown> | null; delta: Record<string, unknown> | null } {
  if (typeof metrics !== "object" || metrics === null || Array.isArray(metrics) || metrics["-"] !== undefined)
    return { metrics, delta: null };
  const model = row.base_model ?? "unknown";
  const asText = (text: string | null) => (v: unknown) =>
    text === null ? v === null : typeof v === "number" && String(v) === text;
  const is = (want: unknown) => (v: unknown) => v === want;
  const json = (want: unknown) => (v: unknown) => sameJson(v, want);
  // float8 -> jsonb prints the shortest text that reads back as the same double, as JSON.stringify does.
  const cost = (want: number | null) => (v: unknown) => v === want && (v === null || typeof v === "number");
  const base: Record<string, (v: unknown) => boolean> = {
    durationMs: asText(row.base_duration_ms),
    modelCalls: is(1),
    toolCalls: is(0),
    promptTokens: asText(row.base_prompt_tokens),
    completionTokens: asText(row.base_completion_tokens),
    totalTokens: asText(row.base_total_tokens),
    cachedTokens: is(0),
    reasoningTokens: is(0),
    latencyP50Ms: asText(row.base_duration_ms),
    latencyP95Ms: asText(row.base_duration_ms),
    latencyMaxMs: asText(row.base_duration_ms),
    costUsd: cost(costUsd),
    costComplete: is(costUsd !== null),
    pricedCostUsd: cost(costUsd ?? 0),
    unpricedModels: json(costUsd === null ? [model] : []),
    finishReasons: json({ stop: 1 }),
    models: json([model]),
    priceTableVersion: is(BASE_PRICE_TABLE_VERSION),
  };
  const delta: Record<string, unknown> = {};
  const gone: string[] = [];
  for (const [k, same] of Object.entries(base)) {
    const v = metrics[k];
    if (v === undefined) gone.push(k);
    else if (!same(v)) delta[k] = v;
  }
  for (const [k, v] of Object.entries(metrics))
    if (v !== undefined && k !== "costByModel" && !(k in base)) delta[k] = v;
  const byModel = metrics.costByModel;
  if (byModel === undefined) gone.push("costByModel");
  else if (!sameJson(byModel, impliedCostByModel(metrics))) delta.costByModel = byModel;
  if (gone.length) delta["-"] = gone.sort();
  if (Object.keys(delta).length === 0) return { metrics: null, delta: null };
  // Metrics of another shape than the analysis writes (few of the base's keys) can cost more as
  // a delta, which lists every base key they lack: those stay as they are.
  if (JSON.stringify(delta).length >= JSON.stringify(metrics).length) return { metrics, delta: null };
  return { metrics: null, delta };
}

/** `trace_metrics_by_model` of the top level: `m -> key` is SQL null (JSON null) where absent. */
function impliedCostByModel(m: Record<string, unknown>): unknown[] {
  const at = (k: string) => (m[k] === undefined ? null : m[k]);
  const models = m.models;
  return [
    {
      model: Array.isArray(models) && models.length > 0 && models[0] !== undefined ? models[0] : null,
      calls: at("modelCalls"),
      promptTokens: at("promptTokens"),
      cachedTokens: at("cachedTokens"),
      completionTokens: at("completionTokens"),
      reasoningTokens: at("reasoningTokens"),
      totalTokens: at("totalTokens"),
      costUsd: at("costUsd"),
      priced: at("costUsd") !== null,
      note: null,
    },
  ];
}

/** Equal as JSON values (what jsonb equality compares): key order ignored, undefined keys absent. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== "number" || Number.isFinite(a);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((v, i) => sameJson(v ?? null, bs[i] ?? null));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => (b as Record<string, unknown>)[k] !== undefined && sameJson((a as any)[k], (b as any)[k]))
  );
}
