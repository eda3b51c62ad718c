import type postgres from "postgres";
import { TRACE_MATURED_AT_SQL, TRACE_STATUS_SQL } from "@cellar/shared/maturation/state";
import { traceMetricBaseValueSql, traceMetricSource } from "@cellar/shared/db/trace-metrics";
import type { ServiceRef } from "../../auth/principal.ts";
import { filteredBody } from "../../http/filters.ts";
import { TRACE_COLUMNS, traceSummaryOut } from "../../traces/model.ts";
import type { FilterSet, PagedQuery } from "../filters.ts";
import { runFiltered } from "../paged.ts";

/** The traces search (POST traces/filtered): filterable fields, body and query. */

export const TRACE_FILTERS: FilterSet = {
  fields: {
    traceId: { type: "string", expr: "tr.trace_id", sortable: true, notNull: true },
    sessionId: { type: "string", expr: "tr.session_id", sortable: true, notNull: true },
    environment: { type: "string", expr: "tr.environment", sortable: true },
    model: { type: "string", expr: "tr.model", sortable: true },
    provider: { type: "string", expr: "tr.provider", sortable: true, notNull: true },
    status: { type: "enum", expr: TRACE_STATUS_SQL, values: ["active", "matured"], sortable: true, notNull: true },
    startTime: { type: "datetime", expr: "tr.start_time", sortable: true, notNull: true },
    endTime: { type: "datetime", expr: "tr.end_time", sortable: true, notNull: true },
    // The analysis' time (written once, at maturation): read after the join, and sorted off its rows.
    maturedAt: { type: "datetime", expr: TRACE_MATURED_AT_SQL, sortable: true, joined: true },
    durationMs: {
      type: "number",
      expr: "(extract(epoch from tr.end_time - tr.start_time) * 1000)",
      sortable: true,
      notNull: true,
    },
    costUsd: { type: "number", expr: "ta.cost_usd", sortable: true, joined: true },
  },
  // Any numeric key of the trace's metrics, as stored (shared/db/trace-metrics.ts).
  dynamic: {
    prefix: "metrics.",
    expr: (sql, name) => {
      const base = traceMetricBaseValueSql(name);
      const v = base ? sql.unsafe(base) : sql`(${sql.unsafe(traceMetricSource(name))} -> ${name})`;
      // The value computed once (a base key may read the trace row): `offset 0` keeps the planner
      // from pulling it up into both of its uses (two reads of the trace row per candidate).
      return sql`(select case when jsonb_typeof(x.v) = 'number' then (x.v #>> '{}')::float8 end from (select ${v} as v offset 0) x)`;
    },
  },
};

export const TracesFilteredBody = filteredBody("serviceName", "skipTotalCount", TRACE_FILTERS);

/** Traces of one service; default order newest first. */
export async function filterTraces(sql: postgres.Sql, svc: ServiceRef & { tenantId: string }, q: PagedQuery) {
  const { rows, pagination } = await runFiltered(
    sql,
    {
      set: TRACE_FILTERS,
      columns: TRACE_COLUMNS,
      table: "traces",
      alias: "tr",
      scope: sql`tr.tenant_id = ${svc.tenantId} and tr.trace_service_id = ${svc.id}`,
      analysis: {
        table: "trace_analyses ta",
        on: "ta.trace_pk = tr.id",
        pk: "ta.trace_pk",
        scope: sql`ta.trace_service_id = ${svc.id}`,
      },
      defaultSort: "startTime",
      tiebreak: "tr.id",
    },
    q,
  );
  return { traces: rows.map((r) => traceSummaryOut(r, svc.name)), pagination };
}
