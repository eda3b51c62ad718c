import { Elysia, t } from "elysia";
import { forbidden, notFound, paymentRequired } from "@cellar/shared/errors";
import type { PlatformDeps } from "../deps.ts";
import { readPool, sessionReadPool } from "../replica.ts";
import { platformAuth } from "../auth/plugin.ts";
import { hasRole, resolveService, type Principal } from "../auth/principal.ts";
import { pagedQuery, strictBody } from "../http/filters.ts";
import { doc, requiredQuery } from "../http/schemas.ts";
import {
  sessionCostByModel,
  sessionIntents,
  sessionProblems,
  sessionTldr,
  sessionToolCosts,
  sessionToolSchemas,
} from "./analysis.ts";
import {
  CostByModel,
  Intents,
  ListQuery,
  ProblemAnalysis,
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
import { CostBreakdownQuery, SessionCostBreakdown, sessionCostBreakdown } from "./cost.ts";
import { filterSessions, SessionsFilteredBody } from "./search.ts";
import { deleteSession, sessionContext } from "./service.ts";
import { sessionEvents, sessionGraph, sessionSpans, sessionTraces, sessionTree } from "./telemetry.ts";
import { readTranscript, readTranscriptItem } from "./transcript.ts";

const TAG = "Sessions";

/**
 * Session reads under S = /telemetry/otel/sessions/{serviceName}/{sessionId}, the sessions
 * search and intents. There is deliberately no GET on S itself (contract: it is 404).
 */
export function sessionRoutes(deps: PlatformDeps) {
  const ctx = (p: Principal, params: { serviceName: string; sessionId: string }) =>
    sessionContext(deps, p, params.serviceName, params.sessionId);
  const page = (q: { limit?: number; offset?: number; cursor?: string }) => ({
    limit: q.limit ?? 500,
    offset: q.offset ?? 0,
    cursor: q.cursor,
  });
  return new Elysia({ prefix: "/telemetry/otel/sessions" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get(
      "/:serviceName/:sessionId/transcript",
      async ({ params, query, principal }) => {
        const svc = await resolveService(deps.sql, principal, params.serviceName);
        return readTranscript(
          await sessionReadPool(deps, svc.id, params.sessionId),
          svc.id,
          params.sessionId,
          {
            limit: query.limit ?? 100,
            offset: query.offset ?? 0,
            cursor: query.cursor,
            content: query.content ?? "lean",
          },
          deps.windowSeconds,
        );
      },
      {
        params: SessionParams,
        query: TranscriptQuery,
        detail: doc(TAG, "Transcript: conversation items, paged", TranscriptPage),
      },
    )
    .get(
      "/:serviceName/:sessionId/transcript/items/:itemId",
      async ({ params, principal }) => {
        const svc = await resolveService(deps.sql, principal, params.serviceName);
        const sql = await sessionReadPool(deps, svc.id, params.sessionId);
        return readTranscriptItem(sql, svc.id, params.sessionId, params.itemId);
      },
      {
        params: t.Object({ serviceName: t.String(), sessionId: t.String(), itemId: t.String() }),
        detail: doc(TAG, "One transcript item in full, with reasoning and raw span attributes", TranscriptItemDetail),
      },
    )
    .get(
      "/:serviceName/:sessionId/traces",
      async ({ params, query, principal }) => sessionTraces(await ctx(principal, params), page(query)),
      {
        params: SessionParams,
        query: ListQuery,
        detail: doc(TAG, "Traces that make up the session", SessionTraces),
      },
    )
    .get(
      "/:serviceName/:sessionId/spans",
      async ({ params, query, principal }) => sessionSpans(await ctx(principal, params), page(query)),
      {
        params: SessionParams,
        query: ListQuery,
        detail: doc(TAG, "Raw spans of the session", SessionSpans),
      },
    )
    .get("/:serviceName/:sessionId/tree", async ({ params, principal }) => sessionTree(await ctx(principal, params)), {
      params: SessionParams,
      detail: doc(TAG, "Span hierarchy as a tree", SessionTree),
    })
    .get(
      "/:serviceName/:sessionId/graph",
      async ({ params, principal }) => sessionGraph(await ctx(principal, params)),
      {
        params: SessionParams,
        detail: doc(TAG, "Span hierarchy as nodes and edges", SessionGraph),
      },
    )
    .get(
      "/:serviceName/:sessionId/events",
      async ({ params, query, principal }) => sessionEvents(await ctx(principal, params), page(query)),
      {
        params: SessionParams,
        query: ListQuery,
        detail: doc(TAG, "Events emitted during the session", SessionEvents),
      },
    )
    .get("/:serviceName/:sessionId/tldr", async ({ params, principal }) => sessionTldr(await ctx(principal, params)), {
      params: SessionParams,
      detail: doc(TAG, "Summary of the session", Tldr),
    })
    .get(
      "/:serviceName/:sessionId/problem-analysis",
      async ({ params, principal }) => sessionProblems(await ctx(principal, params)),
      {
        params: SessionParams,
        detail: doc(TAG, "Problems detected in the session", ProblemAnalysis),
      },
    )
    .get(
      "/:serviceName/:sessionId/cost-by-model",
      async ({ params, principal }) => sessionCostByModel(await ctx(principal, params)),
      {
        params: SessionParams,
        detail: doc(TAG, "Cost breakdown by model", CostByModel),
      },
    )
    .get(
      "/:serviceName/:sessionId/cost-breakdown",
      async ({ params, query, principal }) =>
        sessionCostBreakdown(await ctx(principal, params), principal.tenantId, {
          limit: query.limit ?? 100,
          offset: query.offset ?? 0,
          cursor: query.cursor,
        }),
      {
        params: SessionParams,
        query: CostBreakdownQuery,
        detail: doc(TAG, "Cost of each call, line by line (a page of traces)", SessionCostBreakdown),
      },
    )
    .get(
      "/:serviceName/:sessionId/tool-costs",
      async ({ params, principal }) => sessionToolCosts(await ctx(principal, params)),
      {
        params: SessionParams,
        detail: doc(TAG, "Cost attributed to tools", ToolCosts),
      },
    )
    .get(
      "/:serviceName/:sessionId/tool-schemas",
      async ({ params, principal }) => sessionToolSchemas(await ctx(principal, params)),
      {
        params: SessionParams,
        detail: doc(TAG, "Tool schemas seen in the session", ToolSchemas),
      },
    )
    .get(
      "/:serviceName/intents",
      async ({ params, query, principal }) =>
        sessionIntents(await ctx(principal, { serviceName: query.trace_service_name, sessionId: params.serviceName })),
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
    .post(
      "/filtered",
      async ({ body, principal }) => {
        const svc = await resolveService(deps.sql, principal, body.serviceName);
        return filterSessions(
          readPool(deps),
          { ...svc, tenantId: principal.tenantId },
          pagedQuery(body, "skipTotalCount"),
        );
      },
      {
        body: SessionsFilteredBody,
        transform: strictBody(SessionsFilteredBody),
        detail: doc(TAG, "Search sessions by id, time range, status, label or metric", SessionsPage),
      },
    );
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
