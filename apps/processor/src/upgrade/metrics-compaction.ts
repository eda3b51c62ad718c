import type postgres from "postgres";
import {
  storedTraceMetrics,
  traceMetricsBaseFieldsSql,
  traceMetricsBaseSql,
  type TraceMetricsBaseFields,
} from "@cellar/shared/db/trace-metrics";
import type { Logger } from "@cellar/shared/logger";

/**
 * Moves trace analyses stored with their metrics in full (every row written before the maturation
 * wrote deltas itself) to migration 0021's compact shape, online: the table walked a range of
 * pages at a time, up to its size at the start (rows written since are deltas), the delta computed by the processor (storedTraceMetrics, as the maturation does) and
 * written only where Postgres' own `trace_metrics_restore` rebuilds the stored metrics from it, in
 * the same statement: a row it would not rebuild stays in full. Readers take both shapes
 * (shared/db/trace-metrics.ts), so answers are the same before, during and after. Analyses are
 * written once and never updated, so no lock is taken: two processors compacting the same rows
 * write the same delta, the second finds nothing left in full. Returns the rows compacted.
 */
export async function compactStoredMetrics(
  sql: postgres.Sql,
  o: { pages?: number; pauseMs?: number; stopped?: () => boolean } = {},
): Promise<number> {
  // Walked in heap order, a range of pages at a time (a TID range scan): in key order every row
  // was on another page, and an upgrade of 3 M rows read them one random page at a time.
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
 * The processor runs the compaction once at start, in the background, with a pause between
 * batches so ingest keeps its share of Postgres. A finished compaction costs one walk of
 * `trace_analyses` at the next start (docs/performance.md, "Stored bytes per trace").
 */
export function startMetricsCompaction(sql: postgres.Sql, logger: Logger) {
  let stopped = false;
  const done = (async () => {
    const compacted = await compactStoredMetrics(sql, { pauseMs: 20, stopped: () => stopped });
    if (compacted) logger.info("trace metrics moved to the compact shape (migration 0021)", { compacted });
  })().catch((err) => logger.error("trace metrics compaction failed; it resumes at the next start", { err }));
  return {
    async stop() {
      stopped = true;
      await done;
    },
  };
}
