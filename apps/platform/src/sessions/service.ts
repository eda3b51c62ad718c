import type postgres from "postgres";
import { forbidden, notFound } from "@cellar/shared/errors";
import * as maturationState from "@cellar/shared/maturation/state";
import type { PlatformDeps } from "../deps.ts";
import { hasRole, resolveService, type Principal } from "../auth/principal.ts";

/** Deleting a session (data subject requests). Loading one is query/sessions/row.ts. */

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
        -- Items of both stored shapes (shared/analysis/transcript-rows.ts): runs, and rows written before.
        ((select count(*) from transcript_items where session_pk = ${s.id})
          + (select coalesce(sum(cardinality(item_ids)), 0) from transcript_runs where session_pk = ${s.id}))::int as items,
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
