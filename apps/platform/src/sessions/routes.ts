import { Elysia, t } from "elysia";
import { paymentRequired } from "@cellar/shared/errors";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { type Resource, resource } from "../http/resource.ts";
import { strictBody } from "../http/filters.ts";
import { doc, LOOKUP_ERRORS, requiredQuery } from "../http/schemas.ts";
import {
  listPage,
  searchSessions,
  sessionCostBreakdown,
  sessionCostByModel,
  SessionsFilteredBody,
  sessionEvents,
  sessionGraph,
  sessionIntents,
  sessionProblems,
  sessionRead,
  sessionSpans,
  sessionTldr,
  sessionToolCosts,
  sessionToolSchemas,
  sessionTraces,
  sessionTranscript,
  sessionTranscriptItem,
  sessionTree,
} from "../query/sessions.ts";
import {
  CostBreakdownQuery,
  CostByModel,
  Intents,
  ListQuery,
  ProblemAnalysis,
  SessionCostBreakdown,
  SessionDeleted,
  SessionEvents,
  SessionGraph,
  SessionParams,
  SessionsPage,
  SessionSpans,
  SessionTraces,
  SessionTree,
  Tldr,
  ToolCosts,
  ToolSchemas,
  TranscriptItemDetail,
  TranscriptPage,
  TranscriptQuery,
} from "./model.ts";
import { deleteSessionOnRequest } from "./service.ts";

const TAG = "Sessions";

/**
 * Session reads under S = /telemetry/otel/sessions/{serviceName}/{sessionId}, the sessions
 * search and intents. There is deliberately no GET on S itself (contract: it is 404).
 */
export function sessionRoutes(deps: PlatformDeps) {
  return resource(deps, "/telemetry/otel/sessions")
    .use((app) => sessionTelemetryRoutes(app, deps))
    .use((app) => sessionAnalysisRoutes(app, deps))
    .use((app) => sessionSearchRoutes(app, deps));
}

/** The session's telemetry as stored: its transcript, traces, spans and events, and their shapes. */
function sessionTelemetryRoutes(app: Resource, deps: PlatformDeps) {
  const page = listPage;
  return app
    .get(
      "/:serviceName/:sessionId/transcript",
      ({ params, query, principal }) => sessionTranscript(deps, principal, params, query),
      {
        params: SessionParams,
        query: TranscriptQuery,
        detail: doc(TAG, "Transcript: conversation items, paged", TranscriptPage),
      },
    )
    .get(
      "/:serviceName/:sessionId/transcript/items/:itemId",
      ({ params, principal }) => sessionTranscriptItem(deps, principal, params),
      {
        params: t.Object({ serviceName: t.String(), sessionId: t.String(), itemId: t.String() }),
        detail: doc(TAG, "One transcript item in full, with reasoning and raw span attributes", TranscriptItemDetail, {
          errors: LOOKUP_ERRORS,
        }),
      },
    )
    .get(
      "/:serviceName/:sessionId/traces",
      ({ params, query, principal }) => sessionRead(deps, principal, params, (s) => sessionTraces(s, page(query))),
      {
        params: SessionParams,
        query: ListQuery,
        detail: doc(TAG, "Traces that make up the session", SessionTraces),
      },
    )
    .get(
      "/:serviceName/:sessionId/spans",
      ({ params, query, principal }) => sessionRead(deps, principal, params, (s) => sessionSpans(s, page(query))),
      {
        params: SessionParams,
        query: ListQuery,
        detail: doc(TAG, "Raw spans of the session", SessionSpans),
      },
    )
    .get(
      "/:serviceName/:sessionId/tree",
      ({ params, principal }) => sessionRead(deps, principal, params, sessionTree),
      {
        params: SessionParams,
        detail: doc(TAG, "Span hierarchy as a tree", SessionTree, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/:serviceName/:sessionId/graph",
      ({ params, principal }) => sessionRead(deps, principal, params, sessionGraph),
      {
        params: SessionParams,
        detail: doc(TAG, "Span hierarchy as nodes and edges", SessionGraph, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/:serviceName/:sessionId/events",
      ({ params, query, principal }) => sessionRead(deps, principal, params, (s) => sessionEvents(s, page(query))),
      {
        params: SessionParams,
        query: ListQuery,
        detail: doc(TAG, "Events emitted during the session", SessionEvents),
      },
    );
}

/** What maturation made of the session: its summary, problems, costs and tools. */
function sessionAnalysisRoutes(app: Resource, deps: PlatformDeps) {
  return app
    .get(
      "/:serviceName/:sessionId/tldr",
      ({ params, principal }) => sessionRead(deps, principal, params, sessionTldr),
      {
        params: SessionParams,
        detail: doc(TAG, "Summary of the session", Tldr, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/:serviceName/:sessionId/problem-analysis",
      ({ params, principal }) => sessionRead(deps, principal, params, sessionProblems),
      {
        params: SessionParams,
        detail: doc(TAG, "Problems detected in the session", ProblemAnalysis, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/:serviceName/:sessionId/cost-by-model",
      ({ params, principal }) => sessionRead(deps, principal, params, sessionCostByModel),
      {
        params: SessionParams,
        detail: doc(TAG, "Cost breakdown by model", CostByModel, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/:serviceName/:sessionId/cost-breakdown",
      ({ params, query, principal }) =>
        sessionRead(deps, principal, params, (s) =>
          sessionCostBreakdown(s, principal.tenantId, {
            limit: query.limit ?? 100,
            offset: query.offset ?? 0,
            cursor: query.cursor,
          }),
        ),
      {
        params: SessionParams,
        query: CostBreakdownQuery,
        detail: doc(TAG, "Cost of each call, line by line (a page of traces)", SessionCostBreakdown),
      },
    )
    .get(
      "/:serviceName/:sessionId/tool-costs",
      ({ params, principal }) => sessionRead(deps, principal, params, sessionToolCosts),
      {
        params: SessionParams,
        detail: doc(TAG, "Cost attributed to tools", ToolCosts, { errors: LOOKUP_ERRORS }),
      },
    )
    .get(
      "/:serviceName/:sessionId/tool-schemas",
      ({ params, principal }) => sessionRead(deps, principal, params, sessionToolSchemas),
      {
        params: SessionParams,
        detail: doc(TAG, "Tool schemas seen in the session", ToolSchemas, { errors: LOOKUP_ERRORS }),
      },
    );
}

/** A session's intents (plan pro) and the sessions search. */
function sessionSearchRoutes(app: Resource, deps: PlatformDeps) {
  return app
    .get(
      "/:serviceName/intents",
      ({ params, query, principal }) =>
        sessionRead(
          deps,
          principal,
          { serviceName: query.trace_service_name, sessionId: params.serviceName },
          sessionIntents,
        ),
      {
        // In transform (before validation): on a plan without intents every call is 402.
        transform: ({ principal }) => {
          if (principal.plan !== "pro") throw paymentRequired("your plan does not include intents");
        },
        params: t.Object({ serviceName: t.String({ description: "The session id" }) }),
        query: t.Object({ trace_service_name: requiredQuery("trace_service_name") }),
        detail: doc(TAG, "Intents matched to the session (plan pro)", Intents, {
          errors: [400, 401, 402, 403, 404],
          rename: { serviceName: "sessionId" },
        }),
      },
    )
    .post("/filtered", ({ body, principal }) => searchSessions(deps, principal, body), {
      body: SessionsFilteredBody,
      transform: strictBody(SessionsFilteredBody),
      detail: doc(TAG, "Search sessions by id, time range, status, label or metric", SessionsPage),
    });
}

/**
 * `DELETE /telemetry/otel/sessions/{serviceName}/{sessionId}`: data subject requests; admin role.
 * A plugin of its own because its authentication differs from the reads': it is not counted
 * against the per-key read limit (platformAuth without a limiter), and one Elysia instance gives
 * all its routes the same auth hook.
 */
export function sessionDeleteRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/telemetry/otel/sessions" })
    .use(platformAuth(deps.keys, undefined, deps.signIns))
    .delete("/:serviceName/:sessionId", ({ params, principal }) => deleteSessionOnRequest(deps, principal, params), {
      params: t.Object({ serviceName: t.String(), sessionId: t.String() }),
      detail: doc(
        "Sessions",
        "Delete a session and everything stored under it (admin role; data subject requests)",
        SessionDeleted,
        { perKeyLimit: false },
      ),
    });
}
