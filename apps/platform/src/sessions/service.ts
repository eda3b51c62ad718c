import type postgres from "postgres";
import { forbidden, notFound } from "@cellar/shared/errors";
import * as maturationState from "@cellar/shared/maturation/state";
import type { PlatformDeps } from "../deps.ts";
import { hasRole, resolveService, type Principal } from "../auth/principal.ts";

/** Loading one session (with its readiness), and deleting a session. */

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

/**
 * Removes one session and everything stored under it (traces, spans, events, transcript,
 * analyses, findings, tool and intent links: foreign keys cascade) in one transaction, and
 * says how many rows of each kind went. Issues keep their counts (history, not telemetry).
 * Telemetry for the same session id still in flight, or sent later, makes a new session.
 */
export async function deleteSession(sql: postgres.Sql, serviceId: string, sessionId: string) {
  return sql.begin(async (tx) => {
    const [s] = await tx<
      { id: string }[]
    >`select id from sessions where trace_service_id = ${serviceId} and session_id = ${sessionId} for update`;
    if (!s) return null;
    const [counts] = await tx<{ traces: number; spans: number; events: number; items: number; findings: number }[]>`
      select (select count(*) from traces where session_pk = ${s.id})::int as traces,
        -- Stored span rows (traces before migration 0017) and the derived spans' ids (since: rows until 0022, then on the trace).
        ((select count(*) from spans sp join traces tr on sp.trace_pk = tr.id where tr.session_pk = ${s.id})
          + (select count(*) from span_ids k join traces tr on k.trace_pk = tr.id where tr.session_pk = ${s.id})
          + (select coalesce(sum(cardinality(span_keys)), 0) from traces where session_pk = ${s.id}))::int as spans,
        (select count(*) from events where session_pk = ${s.id})::int as events,
        (select count(*) from transcript_items where session_pk = ${s.id})::int as items,
        (select count(*) from findings where session_pk = ${s.id})::int as findings`;
    await maturationState.deleteSession(tx, s.id);
    return {
      traces: counts.traces,
      spans: counts.spans,
      events: counts.events,
      transcriptItems: counts.items,
      findings: counts.findings,
    };
  });
}

/** DELETE .../{serviceName}/{sessionId} (admin role; data subject requests): deleted and logged, or 404. */
export async function deleteSessionOnRequest(
  deps: PlatformDeps,
  p: Principal,
  params: { serviceName: string; sessionId: string },
) {
  if (!hasRole(p, "admin")) throw forbidden("deleting a session needs the admin or owner role");
  const svc = await resolveService(deps.sql, p, params.serviceName);
  const deleted = await deleteSession(deps.sql, svc.id, params.sessionId);
  if (!deleted) throw notFound("no such session");
  deps.logger.info("session deleted on request", {
    serviceName: svc.name,
    sessionId: params.sessionId,
    keyId: p.keyId,
    ...deleted,
  });
  return { serviceName: svc.name, sessionId: params.sessionId, deleted };
}
