import { Elysia, t } from "elysia";
import { notFound } from "@cellar/shared/errors";
import type { PlatformDeps } from "../deps.ts";
import { sessionReadPool } from "../replica.ts";
import { platformAuth } from "../auth/plugin.ts";
import { candidateServices, pickOne, resolveService, type Principal } from "../auth/principal.ts";
import { doc } from "../http/schemas.ts";
import { sessionMetrics } from "../sessions/analysis.ts";
import { SessionMetric, SessionMetricsRead } from "../sessions/model.ts";
import { loadSession, sessionContext } from "../sessions/service.ts";

/**
 * GET /telemetry/metrics/session/{serviceName}/{sessionId} and
 * GET /telemetry/metrics/session/{sessionId}/{metricName} share one path shape, so one route
 * serves both: when the first segment is a service of the tenant holding a session named by the
 * second, it is the session's metrics; otherwise the pair is a session id and a metric name.
 * A first segment naming a tenant service the user cannot see is 403 either way.
 */
export function metricsRoutes(deps: PlatformDeps) {
  async function oneMetric(p: Principal, sessionId: string, metricName: string, serviceName?: string) {
    const services = await candidateServices(deps.sql, p, serviceName);
    const matches = await deps.sql<{ trace_service_id: string }[]>`
      select trace_service_id from sessions where trace_service_id = any(${services.map((s) => s.id)}::uuid[]) and session_id = ${sessionId}`;
    const hit = pickOne(matches, "session", "sessionId");
    const svc = services.find((s) => s.id === hit.trace_service_id)!;
    const sql = await sessionReadPool(deps, svc.id, sessionId);
    const session = await loadSession(sql, svc.id, sessionId);
    const read = await sessionMetrics({
      sql,
      serviceName: svc.name,
      session,
      windowSeconds: deps.windowSeconds,
    });
    const { metrics, ...head } = read;
    if (metrics && !Object.hasOwn(metrics, metricName)) throw notFound(`no metric named ${JSON.stringify(metricName)}`);
    // Before the first maturation no metric exists yet: `processing` with a null value.
    return { ...head, name: metricName, value: metrics ? (metrics as Record<string, unknown>)[metricName] : null };
  }

  return new Elysia({ prefix: "/telemetry/metrics" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get(
      "/session/:serviceName/:sessionId",
      async ({ params, query, principal }) => {
        const [svc] = await deps.sql<{ id: string; has_session: boolean }[]>`
        select ts.id, exists (select 1 from sessions s where s.trace_service_id = ts.id and s.session_id = ${params.sessionId}) as has_session
        from trace_services ts where ts.tenant_id = ${principal.tenantId} and ts.name = ${params.serviceName}`;
        // A named service outside the user's projects is 403 before any session lookup, so the
        // answer never tells which sessions exist there (as on every S/* read).
        if (svc) await resolveService(deps.sql, principal, params.serviceName);
        if (svc?.has_session)
          return sessionMetrics(await sessionContext(deps, principal, params.serviceName, params.sessionId));
        return oneMetric(principal, params.serviceName, params.sessionId, query.serviceName);
      },
      {
        params: t.Object({ serviceName: t.String(), sessionId: t.String() }),
        query: t.Object({
          serviceName: t.Optional(
            t.String({
              minLength: 1,
              maxLength: 200,
              description: "For the {sessionId}/{metricName} form: the service, when the session id exists in several",
            }),
          ),
        }),
        detail: doc(
          "Metrics",
          "Metrics of the session, or one metric by name",
          t.Union([SessionMetricsRead, SessionMetric]),
          {
            description:
              "Serves both GET /telemetry/metrics/session/{serviceName}/{sessionId} (all metrics) and GET /telemetry/metrics/session/{sessionId}/{metricName} (one metric). " +
              "The first form wins when {serviceName} names a service of your tenant that has session {sessionId}.",
          },
        ),
      },
    );
}
