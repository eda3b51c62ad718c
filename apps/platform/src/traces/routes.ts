import { Elysia, t } from "elysia";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { strictBody } from "../http/filters.ts";
import { doc, LOOKUP_ERRORS, requiredQuery } from "../http/schemas.ts";
import {
  eventsOfTrace,
  searchTraces,
  spanById,
  spansOfTrace,
  TracesFilteredBody,
  traceMetricsOf,
  traceOf,
} from "../query/traces.ts";
import { OptionalService, Span, Trace, TraceEvents, TraceMetrics, TracesPage, TraceSpans } from "./model.ts";

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
      ({ params, query, principal }) => traceOf(deps, principal, params.traceId, query.serviceName),
      {
        params: t.Object({ traceId: t.String() }),
        query: t.Object({ serviceName: requiredQuery("serviceName") }),
        detail: doc(TAG, "The trace, with request and responses as ingested", Trace),
      },
    )
    .get(
      "/otel/spans/:serviceName/:traceId",
      ({ params, principal }) => spansOfTrace(deps, principal, params.serviceName, params.traceId),
      {
        params: t.Object({ serviceName: t.String(), traceId: t.String() }),
        detail: doc(TAG, "Spans of the trace", TraceSpans, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/otel/spans/:serviceName",
      ({ params, query, principal }) => spanById(deps, principal, params.serviceName, query.serviceName),
      {
        params: t.Object({ serviceName: t.String({ description: "The span id" }) }),
        query: OptionalService,
        detail: doc(TAG, "One span", Span, { rename: { serviceName: "spanId" } }),
      },
    )
    .get(
      "/otel/events/:serviceName/:traceId",
      ({ params, principal }) => eventsOfTrace(deps, principal, params.serviceName, params.traceId),
      {
        params: t.Object({ serviceName: t.String(), traceId: t.String() }),
        detail: doc(TAG, "Events of the trace", TraceEvents, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/metrics/trace/:traceId",
      ({ params, query, principal }) => traceMetricsOf(deps, principal, params.traceId, query.serviceName),
      {
        params: t.Object({ traceId: t.String() }),
        query: OptionalService,
        detail: doc("Metrics", "Metrics of the trace", TraceMetrics),
      },
    )
    .post("/otel/traces/filtered", ({ body, principal }) => searchTraces(deps, principal, body), {
      body: TracesFilteredBody,
      transform: strictBody(TracesFilteredBody),
      detail: doc(TAG, "Search traces of a service", TracesPage),
    });
}
