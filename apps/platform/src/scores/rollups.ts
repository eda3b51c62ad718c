import type postgres from "postgres";
import type { DynamicField } from "../query/filters.ts";
import type { ScoreRollups } from "./model.ts";
import { sessionScoreRollups } from "./service.ts";

/**
 * `scores.<name>` in sessions/filtered: the mean of the session's scores of that name (booleans
 * 1/0; null without any), as a filter and a sort key (docs/scores.md). A correlated lookup on
 * the scores index (service, session id, name), so it pages by offset, not by cursor.
 */
export const SCORE_MEAN_FIELD: DynamicField = {
  prefix: "scores.",
  name: /^[^\s\u0000-\u001f\u007f][^\u0000-\u001f\u007f]{0,127}$/,
  sortable: true,
  joined: false,
  expr: (sql, name) =>
    sql`(select avg(sc.value) from scores sc where sc.trace_service_id = s.trace_service_id and sc.session_id = s.session_id and sc.name = ${name})`,
};

/** Session rows with their `scores` rollups (one query for the page). */
export async function withScoreRollups<T extends { sessionId: string }>(
  sql: postgres.Sql | postgres.TransactionSql,
  serviceId: string,
  sessions: T[],
): Promise<Array<T & { scores: ScoreRollups }>> {
  const rollups = await sessionScoreRollups(
    sql,
    serviceId,
    sessions.map((s) => s.sessionId),
  );
  return sessions.map((s) => ({ ...s, scores: rollups.get(s.sessionId) ?? {} }));
}
