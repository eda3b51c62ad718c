import type postgres from "postgres";
import type { EntityFacts } from "./samples.ts";
import { TRACE_MATURED_AT_SQL } from "../maturation/state.ts";
import { traceMetricSource, traceUsageSumSql } from "../db/trace-metrics.ts";

type Sql = postgres.Sql | postgres.TransactionSql;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** Facts of matured sessions chosen by `where` (over `sessions s`), newest maturation first. */
export async function loadSessionFacts(sql: Sql, where: postgres.PendingQuery<postgres.Row[]>, limit: number) {
  const rows = await sql`
    select s.id, s.environment, s.labels, a.cost_usd, a.total_tokens, a.latency_p95_ms, a.errors, a.problems,
      (select coalesce(jsonb_agg(distinct m ->> 'model'), '[]'::jsonb) from jsonb_array_elements(a.cost_by_model) m) as models,
      (select coalesce(jsonb_agg(distinct f.detector), '[]'::jsonb) from findings f where f.session_pk = s.id) as detectors,
      (select coalesce(jsonb_agg(jsonb_build_object('name', sc.name, 'value', sc.value, 'label', sc.label)), '[]'::jsonb)
        from scores sc where sc.trace_service_id = s.trace_service_id and sc.session_id = s.session_id) as scores
    from sessions s left join session_analyses a on a.session_pk = s.id
    where ${where} order by s.matured_at desc nulls last limit ${limit}`;
  return rows.map(
    (r): EntityFacts => ({
      entityPk: r.id,
      environment: r.environment ?? null,
      labels: Array.isArray(r.labels) ? r.labels : [],
      models: (r.models ?? []).filter((m: unknown) => typeof m === "string"),
      costUsd: num(r.cost_usd),
      totalTokens: num(r.total_tokens),
      latencyMs: num(r.latency_p95_ms),
      errors: Number(r.errors ?? 0),
      problems: Number(r.problems ?? 0),
      detectors: r.detectors ?? [],
      scores: r.scores ?? [],
    }),
  );
}

/** Where a trace's `errors` metric is stored (shared/db/trace-metrics.ts). */
const ERRORS = traceMetricSource("errors");

/** Facts of matured traces chosen by `where` (over `traces tr left join trace_analyses ta`), newest first. */
export async function loadTraceFacts(sql: Sql, where: postgres.PendingQuery<postgres.Row[]>, limit: number) {
  const rows = await sql`
    select tr.id, tr.environment, tr.model, ta.cost_usd,
      (extract(epoch from tr.end_time - tr.start_time) * 1000)::float8 as latency_ms,
      ${sql.unsafe(traceUsageSumSql("tr", "total_tokens"))} as total_tokens,
      case when jsonb_typeof(${sql.unsafe(ERRORS)} -> 'errors') = 'number' then (${sql.unsafe(ERRORS)} ->> 'errors')::float8 else 0 end as errors
    from traces tr left join trace_analyses ta on ta.trace_pk = tr.id
    where ${where} order by ${sql.unsafe(TRACE_MATURED_AT_SQL)} desc nulls last limit ${limit}`;
  return rows.map(
    (r): EntityFacts => ({
      entityPk: r.id,
      environment: r.environment ?? null,
      labels: [],
      models: r.model ? [r.model] : [],
      costUsd: num(r.cost_usd),
      totalTokens: num(r.total_tokens),
      latencyMs: num(r.latency_ms),
      errors: Number(r.errors ?? 0),
      problems: 0,
      detectors: [],
      scores: [],
    }),
  );
}
