import type postgres from "postgres";
import { filteredBody } from "../../http/filters.ts";
import { type FilterSet, metricsField, type PagedQuery } from "../filters.ts";
import { runFiltered } from "../paged.ts";
import { SESSION_COLUMNS, sessionOut } from "../../sessions/model.ts";
import { SCORE_MEAN_FIELD, withScoreRollups } from "../../scores/rollups.ts";

/** The sessions search (POST sessions/filtered): filterable fields, body and query. */

/** Filterable session fields (s = sessions, a = session_analyses). */
export const SESSION_FILTERS: FilterSet = {
  fields: {
    sessionId: { type: "string", expr: "s.session_id", sortable: true, notNull: true },
    environment: { type: "string", expr: "s.environment", sortable: true },
    status: { type: "enum", expr: "s.status", values: ["active", "matured"], sortable: true, notNull: true },
    label: { type: "labels", expr: "s.labels" },
    firstActivityAt: { type: "datetime", expr: "s.first_activity_at", sortable: true, notNull: true },
    lastActivityAt: { type: "datetime", expr: "s.last_activity_at", sortable: true, notNull: true },
    maturedAt: { type: "datetime", expr: "s.matured_at", sortable: true },
    maturationCount: { type: "number", expr: "s.maturation_count", sortable: true, notNull: true, integer: true },
    durationMs: { type: "number", expr: "a.duration_ms", sortable: true, joined: true, integer: true },
    turns: { type: "number", expr: "a.turns", sortable: true, joined: true, integer: true },
    modelCalls: { type: "number", expr: "a.model_calls", sortable: true, joined: true, integer: true },
    toolCalls: { type: "number", expr: "a.tool_calls", sortable: true, joined: true, integer: true },
    totalTokens: { type: "number", expr: "a.total_tokens", sortable: true, joined: true, integer: true },
    errors: { type: "number", expr: "a.errors", sortable: true, joined: true, integer: true },
    problems: { type: "number", expr: "a.problems", sortable: true, joined: true, integer: true },
    costUsd: { type: "number", expr: "a.cost_usd", sortable: true, joined: true },
    // Models the session called (names of cost_by_model, docs/analysis.md); empty before maturation.
    model: {
      type: "labels",
      expr: "(select coalesce(jsonb_agg(m -> 'model'), '[]'::jsonb) from jsonb_array_elements(a.cost_by_model) m)",
      joined: true,
    },
  },
  // Any numeric key of the metrics object (docs/analysis.md), e.g. metrics.latencyP95Ms.
  // Latency keys have typed, indexed columns (migration 0009); the rest are read from the jsonb.
  dynamic: [
    metricsField("a", {
      latencyP50Ms: "latency_p50_ms",
      latencyP95Ms: "latency_p95_ms",
      latencyMaxMs: "latency_max_ms",
    }),
    SCORE_MEAN_FIELD,
  ],
};

export const SessionsFilteredBody = filteredBody("serviceName", "skipTotalCount", SESSION_FILTERS);

/** Sessions of one service; default order newest activity first. */
export async function filterSessions(
  sql: postgres.Sql,
  svc: { id: string; name: string; tenantId: string },
  q: PagedQuery,
) {
  const { pagination, extra } = await runFiltered(
    sql,
    {
      set: SESSION_FILTERS,
      columns: SESSION_COLUMNS,
      table: "sessions",
      alias: "s",
      scope: sql`s.tenant_id = ${svc.tenantId} and s.trace_service_id = ${svc.id}`,
      analysis: {
        table: "session_analyses a",
        on: "a.session_pk = s.id",
        pk: "a.session_pk",
        scope: sql`a.trace_service_id = ${svc.id}`,
      },
      defaultSort: "lastActivityAt",
      tiebreak: "s.id",
    },
    q,
    // The page's score rollups in the page's snapshot.
    (db, page) =>
      withScoreRollups(
        db,
        svc.id,
        page.map((r) => sessionOut(r, svc.name)),
      ),
  );
  return { sessions: extra!, pagination };
}
