import { Elysia, t } from "elysia";
import type { PlatformDeps } from "../deps.ts";
import { readPool, replicaOrPrimary } from "../replica.ts";
import { platformAuth } from "../auth/plugin.ts";
import { candidateServices, pickOne, resolveService } from "../auth/principal.ts";
import { pagedQuery, strictBody } from "../http/filters.ts";
import { doc, requiredQuery } from "../http/schemas.ts";
import { OptionalService, Span, Trace, TraceEvents, TraceMetrics, TracesPage, TraceSpans } from "./model.ts";
import {
  filterTraces,
  findSpans,
  findTraceMetrics,
  readTrace,
  traceEvents,
  TracesFilteredBody,
  traceSpans,
} from "./service.ts";

const TAG = "Traces";

/**
 * Trace reads. The trace itself is singular `/trace/{traceId}`; nothing is mounted on plural
 * `/traces/{traceId}`, so a GET there is the router's 404 (contract).
 */
export function traceRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/telemetry" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get(
      "/otel/trace/:traceId",
      async ({ params, query, principal }) => {
        const svc = await resolveService(deps.sql, principal, query.serviceName);
        return replicaOrPrimary(deps, (sql) => readTrace(sql, svc, params.traceId, principal.tenantId));
      },
      {
        params: t.Object({ traceId: t.String() }),
        query: t.Object({ serviceName: requiredQuery("serviceName") }),
        detail: doc(TAG, "The trace, with request and responses as ingested", Trace),
      },
    )
    .get(
      "/otel/spans/:serviceName/:traceId",
      async ({ params, principal }) => {
        const svc = await resolveService(deps.sql, principal, params.serviceName);
        return replicaOrPrimary(deps, (sql) => traceSpans(sql, svc, params.traceId));
      },
      {
        params: t.Object({ serviceName: t.String(), traceId: t.String() }),
        detail: doc(TAG, "Spans of the trace", TraceSpans),
      },
    )
    .get(
      "/otel/spans/:serviceName",
      async ({ params, query, principal }) => {
        const services = await candidateServices(deps.sql, principal, query.serviceName);
        return replicaOrPrimary(deps, async (sql) =>
          pickOne(await findSpans(sql, services, params.serviceName), "span", "spanId"),
        );
      },
      {
        params: t.Object({ serviceName: t.String({ description: "The span id" }) }),
        query: OptionalService,
        detail: doc(TAG, "One span", Span, { rename: { serviceName: "spanId" } }),
      },
    )
    .get(
      "/otel/events/:serviceName/:traceId",
      async ({ params, principal }) => {
        const svc = await resolveService(deps.sql, principal, params.serviceName);
        return replicaOrPrimary(deps, (sql) => traceEvents(sql, svc, params.traceId));
      },
      {
        params: t.Object({ serviceName: t.String(), traceId: t.String() }),
        detail: doc(TAG, "Events of the trace", TraceEvents),
      },
    )
    .get(
      "/metrics/trace/:traceId",
      async ({ params, query, principal }) => {
        const services = await candidateServices(deps.sql, principal, query.serviceName);
        return replicaOrPrimary(deps, async (sql) =>
          pickOne(await findTraceMetrics(sql, services, params.traceId), "trace", "traceId"),
        );
      },
      {
        params: t.Object({ traceId: t.String() }),
        query: OptionalService,
        detail: doc("Metrics", "Metrics of the trace", TraceMetrics),
      },
    )
    .post(
      "/otel/traces/filtered",
      async ({ body, principal }) => {
        const svc = await resolveService(deps.sql, principal, body.serviceName);
        return filterTraces(
          readPool(deps),
          { ...svc, tenantId: principal.tenantId },
          pagedQuery(body, "skipTotalCount"),
        );
      },
      {
        body: TracesFilteredBody,
        transform: strictBody(TracesFilteredBody),
        detail: doc(TAG, "Search traces of a service", TracesPage),
      },
    );
}
