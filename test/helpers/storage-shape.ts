import type postgres from "postgres";
import { TRACE_METRICS_SQL } from "@cellar/shared/db/trace-metrics";

/** Every trace's metrics in full, as the writer before migration 0021 stored them (upgrade tests). */
export async function storeMetricsInFull(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`update trace_analyses ta set metrics = ${TRACE_METRICS_SQL}, metrics_delta = null from traces tr
    where tr.id = ta.trace_pk and ta.metrics is null`);
}
