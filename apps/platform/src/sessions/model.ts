import type postgres from "postgres";
import { t } from "elysia";
import { AnyJson, Iso, iso, intQuery, isoNN, JsonObject, Nullable, offsetQuery, Pagination } from "../http/schemas.ts";
import { CURSOR_MAX_CHARS } from "../query/keyset.ts";
import { Finding } from "../analysis/model.ts";
import { ScoreRollups } from "../scores/model.ts";
import { Event, Span, TraceCost, TraceSummary } from "../traces/model.ts";

/**
 * The sessions resource's request and response schemas (TypeBox: they validate, type and
 * document each route), and the session row mapper beside its schema so they cannot drift.
 */

export const SessionMetrics = t.Object({
  durationMs: t.Integer(),
  turns: t.Integer(),
  modelCalls: t.Integer(),
  toolCalls: t.Integer(),
  totalTokens: t.Integer(),
  errors: t.Integer(),
  problems: t.Integer(),
  costUsd: Nullable(t.Number()),
});
/** A session row as sessions/filtered returns it. `metrics` is null until the first maturation. */
export const Session = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  environment: Nullable(t.String()),
  status: t.Union([t.Literal("active"), t.Literal("matured")]),
  firstActivityAt: Iso,
  lastActivityAt: Iso,
  maturedAt: Nullable(Iso),
  maturationCount: t.Integer(),
  labels: t.Array(t.String()),
  itemCount: Nullable(t.Integer()),
  metrics: Nullable(SessionMetrics),
  // Additive (docs/scores.md): count and mean per score name; `{}` when the session has none.
  scores: t.Optional(ScoreRollups),
});
export const SESSION_COLUMNS = `s.session_id, s.environment, s.status, s.first_activity_at, s.last_activity_at, s.matured_at, s.maturation_count, s.labels,
  a.session_pk as analysed, a.item_count, a.duration_ms, a.turns, a.model_calls, a.tool_calls, a.total_tokens, a.errors, a.problems, a.cost_usd`;
export const sessionOut = (r: postgres.Row, serviceName: string) => ({
  sessionId: r.session_id,
  serviceName,
  environment: r.environment ?? null,
  status: r.status,
  firstActivityAt: isoNN(r.first_activity_at),
  lastActivityAt: isoNN(r.last_activity_at),
  maturedAt: iso(r.matured_at),
  maturationCount: r.maturation_count,
  labels: Array.isArray(r.labels) ? r.labels : [],
  itemCount: r.item_count ?? null,
  metrics: r.analysed
    ? {
        durationMs: r.duration_ms,
        turns: r.turns,
        modelCalls: r.model_calls,
        toolCalls: r.tool_calls,
        totalTokens: r.total_tokens,
        errors: r.errors,
        problems: r.problems,
        costUsd: r.cost_usd ?? null,
      }
    : null,
});

/** Readiness of a materialized read (contract: Transcript readiness; `readiness` in service.ts). */
export const ReadinessFields = {
  status: t.Union([t.Literal("complete"), t.Literal("partial"), t.Literal("processing")]),
  retryAfterSeconds: t.Optional(t.Integer({ minimum: 1 })),
};

/** The sessions search's answer (search.ts). */
export const SessionsPage = t.Object({ sessions: t.Array(Session), pagination: Pagination });

// A session's raw telemetry (telemetry.ts).

export const SessionTraces = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  traces: t.Array(TraceSummary),
  pagination: Pagination,
});
export const SessionSpans = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  spans: t.Array(Span),
  pagination: Pagination,
});
export const SessionEvents = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  events: t.Array(Event),
  pagination: Pagination,
});
/** A span with its children, depth-first in start order. Children are the same shape. */
export const SpanNode = t.Composite([
  Span,
  t.Object({ children: t.Array(t.Record(t.String(), t.Unknown()), { description: "SpanNode objects (recursive)" }) }),
]);
export const SessionTree = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  spanCount: t.Integer(),
  truncated: t.Boolean(),
  roots: t.Array(SpanNode),
});
export const SessionGraph = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  truncated: t.Boolean(),
  nodes: t.Array(
    t.Object({
      id: t.String(),
      label: t.String(),
      kind: t.String(),
      traceId: t.String(),
      startTime: Iso,
      endTime: Iso,
      durationMs: t.Number(),
    }),
  ),
  edges: t.Array(
    t.Object({ source: t.String(), target: t.String(), kind: t.Union([t.Literal("child"), t.Literal("next")]) }),
  ),
});

// Materialized analysis reads (analysis.ts) and the transcript (transcript.ts).

/** Every materialized session read carries the same header: readiness plus which maturation it is. */
const Header = {
  sessionId: t.String(),
  serviceName: t.String(),
  ...ReadinessFields,
  maturationCount: t.Integer(),
  computedAt: Nullable(Iso),
};
export const Tldr = t.Object({
  ...Header,
  tldr: Nullable(t.String()),
  source: Nullable(t.String({ description: "extractive | llm" })),
});
export const ProblemAnalysis = t.Object({
  ...Header,
  problemCount: t.Integer(),
  bySeverity: t.Record(t.String(), t.Integer()),
  problems: t.Array(t.Composite([Finding, t.Object({ issueTitle: t.String() })])),
});
export const CostByModel = t.Object({
  ...Header,
  currency: t.Literal("USD"),
  totalCostUsd: Nullable(t.Number({ description: "null when a model of the session has no price" })),
  models: t.Array(JsonObject, {
    description:
      "{model, calls, promptTokens, cachedTokens, completionTokens, reasoningTokens, totalTokens, costUsd, priced, note}",
  }),
});
export const ToolCosts = t.Object({
  ...Header,
  currency: t.Literal("USD"),
  tools: t.Array(JsonObject, {
    description: "{toolName, calls, modelCalls, promptTokens, completionTokens, totalTokens, costUsd}",
  }),
});
export const ToolSchema = t.Object({
  toolSchemaId: t.String(),
  name: t.String(),
  schemaHash: t.String(),
  schema: JsonObject,
  firstSeenAt: Iso,
  lastSeenAt: Iso,
});
export const ToolSchemas = t.Object({ ...Header, toolSchemas: t.Array(ToolSchema) });
export const Intents = t.Object({
  ...Header,
  intents: t.Array(
    t.Object({
      intentId: t.String(),
      name: t.String(),
      description: t.String(),
      score: t.Number({ minimum: 0, maximum: 1 }),
      evidence: JsonObject,
    }),
  ),
});
export const SessionMetricsRead = t.Object({ ...Header, metrics: Nullable(JsonObject) });
export const SessionMetric = t.Object({
  ...Header,
  name: t.String(),
  value: t.Unknown({ description: "number, boolean, string, array or object as computed" }),
});

/** Items are documented in docs/analysis.md; only the fields every item has are pinned here. */
export const TranscriptItem = t.Object(
  {
    id: t.String(),
    type: t.Union(["system", "user", "assistant", "tool_call", "tool_result", "event"].map((v) => t.Literal(v))),
    role: Nullable(t.String()),
    timestamp: t.String({ format: "date-time" }),
    traceId: Nullable(t.String()),
    spanId: Nullable(t.String()),
    content: AnyJson,
    contentLength: t.Optional(
      t.Integer({ description: "lean reads of tool_call/tool_result: length of the full content" }),
    ),
    contentTruncated: t.Optional(t.Boolean()),
  },
  { additionalProperties: true },
);
export const TranscriptPage = t.Object({
  ...ReadinessFields,
  maturationCount: t.Integer(),
  computedAt: Nullable(t.String({ format: "date-time" })),
  items: t.Array(TranscriptItem),
  truncated: t.Boolean(),
  counts: t.Object({ total: t.Integer(), returned: t.Integer() }),
  pagination: Pagination,
});
export const TranscriptItemDetail = t.Object({
  sessionId: t.String(),
  position: t.Integer(),
  item: TranscriptItem,
  reasoning: Nullable(t.String()),
  spanAttributes: Nullable(JsonObject),
});

// Requests.

/** Deepest offset of a session list read; past it the 400 points at `cursor`. */
export const MAX_LIST_OFFSET = 100_000;

export const CursorQuery = t.Optional(
  t.String({
    minLength: 1,
    maxLength: CURSOR_MAX_CHARS,
    error: "invalid cursor: must be the pagination.nextCursor string of a previous page",
  }),
);
export const TranscriptQuery = t.Object({
  limit: intQuery("limit", 1, 500, 100),
  offset: offsetQuery(),
  cursor: CursorQuery,
  content: t.Optional(
    t.Union([t.Literal("lean"), t.Literal("full")], {
      default: "lean",
      error: "invalid content: must be lean or full",
    }),
  ),
});
export const ListQuery = t.Object({
  limit: intQuery("limit", 1, 1000, 500),
  offset: offsetQuery("offset", MAX_LIST_OFFSET, "; page deeper with cursor (pagination.nextCursor)"),
  cursor: CursorQuery,
});
export const SessionParams = t.Object({ serviceName: t.String(), sessionId: t.String() });

/** The answer to DELETE of a session: how many rows of each kind went. */
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

/** GET S/cost-breakdown (query/sessions/cost.ts). Traces per page: each is a payload to inflate, so fewer than S/traces' 1,000. */
export const COST_PAGE_MAX = 500;

export const CostBreakdownQuery = t.Object({
  limit: intQuery("limit", 1, COST_PAGE_MAX, 100),
  offset: offsetQuery("offset", MAX_LIST_OFFSET, "; page deeper with cursor (pagination.nextCursor)"),
  cursor: CursorQuery,
});

export const SessionCostBreakdown = t.Object({
  sessionId: t.String(),
  serviceName: t.String(),
  currency: t.Literal("USD"),
  /** The sum of this page's calls' lines; null when a call on the page is unpriced. */
  totalUsd: t.Union([t.Number(), t.Null()]),
  /** The sum of the priced calls' lines on this page. */
  pricedUsd: t.Number(),
  calls: t.Integer(),
  unpricedCalls: t.Integer(),
  traces: t.Array(t.Object({ traceId: t.String(), startTime: Iso, cost: TraceCost })),
  pagination: Pagination,
});
