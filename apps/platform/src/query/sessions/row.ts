import type postgres from "postgres";
import { notFound } from "@cellar/shared/errors";

/** Loading one session with its analysis header, and its readiness. */

/** The session row plus its last materialization (null fields when never matured). */
export interface SessionRow {
  pk: string;
  session_id: string;
  trace_service_id: string;
  status: "active" | "matured";
  maturation_count: number;
  matured_at: Date | null;
  activity_seq: number;
  idle_seconds: number;
  through_activity_seq: number | null;
  computed_at: Date | null;
  item_count: number | null;
  truncated: boolean | null;
}

/** One query: the session in the (already authorized) service, with its analysis header. */
export async function loadSession(
  sql: postgres.Sql | postgres.TransactionSql,
  serviceId: string,
  sessionId: string,
): Promise<SessionRow> {
  const [s] = await sql<SessionRow[]>`
    select s.id as pk, s.session_id, s.trace_service_id, s.status, s.maturation_count, s.matured_at, s.activity_seq,
      extract(epoch from now() - s.last_ingested_at)::float8 as idle_seconds,
      a.through_activity_seq, a.computed_at, a.item_count, a.truncated
    from sessions s left join session_analyses a on a.session_pk = s.id
    where s.trace_service_id = ${serviceId} and s.session_id = ${sessionId}`;
  if (!s) throw notFound("no such session");
  return s;
}

export type Readiness = { status: "processing" | "partial" | "complete"; retryAfterSeconds?: number };

/**
 * Contract "Transcript readiness", applied to every materialized read of a session: nothing
 * materialized = `processing`, activity newer than the materialization = `partial`, else
 * `complete`. Until the window has passed since the last activity, maturation cannot happen.
 */
export function readiness(s: SessionRow, windowSeconds: number): Readiness {
  const retryAfterSeconds = Math.max(1, Math.ceil(windowSeconds - s.idle_seconds) + 1);
  if (s.through_activity_seq === null) return { status: "processing", retryAfterSeconds };
  if (Number(s.activity_seq) > Number(s.through_activity_seq)) return { status: "partial", retryAfterSeconds };
  return { status: "complete" };
}
