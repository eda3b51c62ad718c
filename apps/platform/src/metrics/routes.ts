import { Elysia, t } from "elysia";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { doc } from "../http/schemas.ts";
import { sessionMetricsRead } from "../query/sessions.ts";
import { SessionMetric, SessionMetricsRead } from "../sessions/model.ts";

/**
 * GET /telemetry/metrics/session/{serviceName}/{sessionId} and
 * GET /telemetry/metrics/session/{sessionId}/{metricName} share one path shape, so one route
 * serves both: when the first segment is a service of the tenant holding a session named by the
 * second, it is the session's metrics; otherwise the pair is a session id and a metric name.
 * A first segment naming a tenant service the user cannot see is 403 either way.
 */
export function metricsRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/telemetry/metrics" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get(
      "/session/:serviceName/:sessionId",
      ({ params, query, principal }) => sessionMetricsRead(deps, principal, params, query.serviceName),
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
