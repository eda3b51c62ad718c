import type { Static } from "elysia";
import type postgres from "postgres";
import { notFound } from "@cellar/shared/errors";
import type { PlatformDeps } from "../deps.ts";
import { candidateServices, pickOne, resolveService, type Principal } from "../auth/principal.ts";
import { pagedQuery } from "../http/filters.ts";
import { readPool, sessionReadPool } from "../replica.ts";
import type { TranscriptQuery } from "../sessions/model.ts";
import { sessionMetrics } from "./sessions/analysis.ts";
import { loadSession, type SessionRow } from "./sessions/row.ts";
import { filterSessions, type SessionsFilteredBody } from "./sessions/search.ts";
import { readTranscript, readTranscriptItem } from "./sessions/transcript.ts";
import { inSnapshot } from "./snapshot.ts";

// The reads of one session that routes run through sessionRead, and the search's body.
export {
  sessionCostByModel,
  sessionIntents,
  sessionProblems,
  sessionTldr,
  sessionToolCosts,
  sessionToolSchemas,
} from "./sessions/analysis.ts";
export { sessionCostBreakdown } from "./sessions/cost.ts";
export { SessionsFilteredBody } from "./sessions/search.ts";
export { sessionEvents, sessionGraph, sessionSpans, sessionTraces, sessionTree } from "./sessions/telemetry.ts";

/**
 * The reads of sessions as the routes call them: a service resolved for the principal, then the
 * pool the read may use (the replica when it has the session as the primary has it, replica.ts),
 * then the read. The session's own statements are in query/sessions/ (row.ts, transcript.ts,
 * telemetry.ts, analysis.ts, cost.ts), the search in query/sessions/search.ts over paged.ts. Every read of one session
 * (its row, then what the route asks) runs in one snapshot of the pool it may use.
 */

type SessionParams = { serviceName: string; sessionId: string };

/** What a read of one session is given: its snapshot, its row, the service's name and the window. */
export interface SessionRead {
  sql: postgres.TransactionSql;
  serviceName: string;
  session: SessionRow;
  windowSeconds: number;
}

/** Loads the session (404 when missing) and runs `read` over it, in one snapshot of `pool`. */
function overSession<T>(
  deps: PlatformDeps,
  pool: postgres.Sql,
  svc: { id: string; name: string },
  sessionId: string,
  read: (s: SessionRead) => Promise<T>,
): Promise<T> {
  return inSnapshot(pool, async (sql) =>
    read({
      sql,
      serviceName: svc.name,
      session: await loadSession(sql, svc.id, sessionId),
      windowSeconds: deps.windowSeconds,
    }),
  );
}

/**
 * A read of one session of a service the principal can see: the service resolved on the
 * primary, then the session and `read` in one snapshot of the replica when it has the session
 * as the primary has it (read-your-writes, replica.ts), else of the primary.
 */
export async function sessionRead<T>(
  deps: PlatformDeps,
  p: Principal,
  params: SessionParams,
  read: (s: SessionRead) => Promise<T>,
): Promise<T> {
  const svc = await resolveService(deps.sql, p, params.serviceName);
  return overSession(deps, await sessionReadPool(deps, svc.id, params.sessionId), svc, params.sessionId, read);
}

/** Offset paging of a session's lists (traces, spans, events): 500 a page by default. */
export const listPage = (q: { limit?: number; offset?: number; cursor?: string }) => ({
  limit: q.limit ?? 500,
  offset: q.offset ?? 0,
  cursor: q.cursor,
});

/** GET .../transcript: a page of the conversation (lean by default, 100 items). */
export async function sessionTranscript(
  deps: PlatformDeps,
  p: Principal,
  params: SessionParams,
  query: Static<typeof TranscriptQuery>,
) {
  const svc = await resolveService(deps.sql, p, params.serviceName);
  const pool = await sessionReadPool(deps, svc.id, params.sessionId);
  return inSnapshot(pool, (sql) =>
    readTranscript(
      sql,
      svc.id,
      params.sessionId,
      { limit: query.limit ?? 100, offset: query.offset ?? 0, cursor: query.cursor, content: query.content ?? "lean" },
      deps.windowSeconds,
    ),
  );
}

/** GET .../transcript/items/{itemId}: one item in full. */
export async function sessionTranscriptItem(
  deps: PlatformDeps,
  p: Principal,
  params: SessionParams & { itemId: string },
) {
  const svc = await resolveService(deps.sql, p, params.serviceName);
  const pool = await sessionReadPool(deps, svc.id, params.sessionId);
  return inSnapshot(pool, (sql) => readTranscriptItem(sql, svc.id, params.sessionId, params.itemId));
}

/** POST sessions/filtered: the search, on the replica as it is (lists are not read-your-writes). */
export async function searchSessions(deps: PlatformDeps, p: Principal, body: Static<typeof SessionsFilteredBody>) {
  const svc = await resolveService(deps.sql, p, body.serviceName);
  return filterSessions(readPool(deps), { ...svc, tenantId: p.tenantId }, pagedQuery(body, "skipTotalCount"));
}

/**
 * GET /telemetry/metrics/session/{a}/{b}: one path shape serves two reads. When `a` is a service
 * of the tenant holding a session named `b`, it is that session's metrics; otherwise the pair is
 * a session id and a metric name (docs/platform-api.md). A first segment naming a tenant service
 * the user cannot see is 403 either way, before any session lookup, so the answer never tells
 * which sessions exist there.
 */
export async function sessionMetricsRead(
  deps: PlatformDeps,
  p: Principal,
  params: SessionParams,
  serviceName: string | undefined,
) {
  const [svc] = await deps.sql<{ id: string; has_session: boolean }[]>`
    select ts.id, exists (select 1 from sessions s where s.trace_service_id = ts.id and s.session_id = ${params.sessionId}) as has_session
    from trace_services ts where ts.tenant_id = ${p.tenantId} and ts.name = ${params.serviceName}`;
  if (svc) await resolveService(deps.sql, p, params.serviceName);
  if (svc?.has_session) return sessionRead(deps, p, params, sessionMetrics);
  return oneMetric(deps, p, params.serviceName, params.sessionId, serviceName);
}

/** One metric of a session named by its id alone (or with `serviceName` when in several services). */
async function oneMetric(
  deps: PlatformDeps,
  p: Principal,
  sessionId: string,
  metricName: string,
  serviceName?: string,
) {
  const services = await candidateServices(deps.sql, p, serviceName);
  const matches = await deps.sql<{ trace_service_id: string }[]>`
    select trace_service_id from sessions where trace_service_id = any(${services.map((s) => s.id)}::uuid[]) and session_id = ${sessionId}`;
  const hit = pickOne(matches, "session", "sessionId");
  const svc = services.find((s) => s.id === hit.trace_service_id)!;
  const pool = await sessionReadPool(deps, svc.id, sessionId);
  const { metrics, ...head } = await overSession(deps, pool, svc, sessionId, sessionMetrics);
  if (metrics && !Object.hasOwn(metrics, metricName)) throw notFound(`no metric named ${JSON.stringify(metricName)}`);
  // Before the first maturation no metric exists yet: `processing` with a null value.
  return { ...head, name: metricName, value: metrics ? (metrics as Record<string, unknown>)[metricName] : null };
}
