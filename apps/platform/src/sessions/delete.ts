import { Elysia, t } from "elysia";
import type postgres from "postgres";
import { forbidden, notFound } from "@cellar/shared/errors";
import * as maturationState from "@cellar/shared/maturation/state";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { hasRole, resolveService } from "../auth/principal.ts";
import { doc } from "../http/schemas.ts";

export const SessionDeleted = t.Object({
  serviceName: t.String(),
  sessionId: t.String(),
  deleted: t.Object({
    traces: t.Integer(),
    spans: t.Integer(),
    events: t.Integer(),
    transcriptItems: t.Integer(),
    findings: t.Integer(),
  }),
});

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
        (select count(*) from spans sp join traces tr on sp.trace_pk = tr.id where tr.session_pk = ${s.id})::int as spans,
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

/** `DELETE /telemetry/otel/sessions/{serviceName}/{sessionId}`: data subject requests; admin role. */
export function sessionDeleteRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/telemetry/otel/sessions" })
    .use(platformAuth(deps.keys, undefined, deps.signIns))
    .delete(
      "/:serviceName/:sessionId",
      async ({ params, principal }) => {
        if (!hasRole(principal, "admin")) throw forbidden("deleting a session needs the admin or owner role");
        const svc = await resolveService(deps.sql, principal, params.serviceName);
        const deleted = await deleteSession(deps.sql, svc.id, params.sessionId);
        if (!deleted) throw notFound("no such session");
        deps.logger.info("session deleted on request", {
          serviceName: svc.name,
          sessionId: params.sessionId,
          keyId: principal.keyId,
          ...deleted,
        });
        return { serviceName: svc.name, sessionId: params.sessionId, deleted };
      },
      {
        params: t.Object({ serviceName: t.String(), sessionId: t.String() }),
        detail: doc(
          "Sessions",
          "Delete a session and everything stored under it (admin role; data subject requests)",
          SessionDeleted,
        ),
      },
    );
}
