import type postgres from "postgres";
import { t } from "elysia";
import { TRACE_MATURED_AT_SQL, TRACE_STATUS_SQL } from "@cellar/shared/maturation/state";
import { traceUsageSumSql } from "@cellar/shared/db/trace-metrics";
import { AnyJson, Iso, iso, isoNN, JsonObject, Nullable, Pagination } from "../http/schemas.ts";
import { Score } from "../scores/model.ts";

/**
 * Response shapes of traces, their spans and events (camelCase, ISO 8601 times), and the row
 * mappers that produce them: the schema and its mapper sit together so they cannot drift apart.
 * Sessions answer spans, events and trace summaries in these same shapes.
 */

export const Span = t.Object({
  spanId: t.String(),
  parentSpanId: Nullable(t.String()),
  traceId: t.String(),
  sessionId: t.String(),
  serviceName: t.String(),
  name: t.String(),
  kind: t.String(),
  startTime: Iso,
  endTime: Iso,
  durationMs: t.Number(),
  attributes: JsonObject,
});
export const SPAN_COLUMNS =
  "sp.span_id, sp.parent_span_id, sp.trace_id, sp.session_id, sp.name, sp.kind, sp.start_time, sp.end_time, sp.attributes";
export const spanOut = (r: postgres.Row, serviceName: string) => ({
  spanId: r.span_id,
  parentSpanId: r.parent_span_id ?? null,
  traceId: r.trace_id,
  sessionId: r.session_id,
  serviceName,
  name: r.name,
  kind: r.kind,
  startTime: isoNN(r.start_time),
  endTime: isoNN(r.end_time),
  durationMs: new Date(r.end_time).getTime() - new Date(r.start_time).getTime(),
  attributes: r.attributes ?? {},
});

export const Event = t.Object({
  eventId: t.String(),
  name: t.String(),
  sessionId: t.String(),
  traceId: Nullable(t.String()),
  serviceName: t.String(),
  timestamp: Iso,
  severityNumber: Nullable(t.Integer()),
  attributes: JsonObject,
  body: Nullable(JsonObject),
  environment: Nullable(t.String()),
  ingestedAt: Iso,
});
export const EVENT_COLUMNS =
  "e.id, e.name, e.session_id, e.trace_id, e.timestamp, e.severity_number, e.attributes, e.body, e.environment, e.ingested_at";
export const eventOut = (r: postgres.Row, serviceName: string) => ({
  eventId: r.id,
  name: r.name,
  sessionId: r.session_id,
  traceId: r.trace_id ?? null,
  serviceName,
  timestamp: isoNN(r.timestamp),
  severityNumber: r.severity_number ?? null,
  attributes: r.attributes ?? {},
  body: r.body ?? null,
  environment: r.environment ?? null,
  ingestedAt: isoNN(r.ingested_at),
});

const Usage = t.Object({ promptTokens: t.Integer(), completionTokens: t.Integer(), totalTokens: t.Integer() });

export const TraceSummary = t.Object({
  traceId: t.String(),
  sessionId: t.String(),
  serviceName: t.String(),
  environment: Nullable(t.String()),
  provider: t.String(),
  model: Nullable(t.String()),
  status: t.Union([t.Literal("active"), t.Literal("matured")]),
  maturedAt: Nullable(Iso),
  startTime: Iso,
  endTime: Iso,
  durationMs: t.Number(),
  usage: Usage,
  costUsd: Nullable(t.Number()),
  receivedAt: Iso,
});
/** A call's cost as lines (docs/pricing.md, "Cost breakdown"; shared/pricing/breakdown.ts). */
const CostLine = t.Object({
  kind: t.String(),
  tokens: t.Number(),
  usdPerMillion: t.Number(),
  usd: t.Number(),
  tier: Nullable(t.String()),
});
const PriceEntry = t.Object({ id: t.String(), source: t.String(), url: Nullable(t.String()), date: t.String() });
export const TraceCost = t.Object({
  totalUsd: Nullable(t.Number()),
  unpricedCalls: t.Integer(),
  calls: t.Array(
    t.Object({
      index: t.Integer(),
      model: Nullable(t.String()),
      costUsd: Nullable(t.Number()),
      reason: Nullable(t.String()),
      entry: Nullable(PriceEntry),
      serviceTier: Nullable(t.String()),
      lines: t.Array(CostLine),
    }),
  ),
});
export const Trace = t.Composite([
  TraceSummary,
  t.Object({
    request: AnyJson,
    responses: t.Array(AnyJson),
    metrics: Nullable(JsonObject),
    spanCount: t.Integer(),
    // Additive (docs/scores.md): the trace's scores.
    scores: t.Optional(t.Array(Score)),
    // Additive (docs/pricing.md): the cost broken down per call.
    cost: t.Optional(TraceCost),
  }),
]);
/**
 * Token usage summed over the payload's responses (validated integers at ingest): the columns
 * written with the row since migration 0015, else summed from an older row's jsonb payload.
 */
const usageSum = (key: string) => `${traceUsageSumSql("tr", key)} as ${key}`;
/** Over `traces tr left join trace_analyses ta`; status and maturation time from the trace's state (shared/maturation/state.ts). */
export const TRACE_COLUMNS = `tr.trace_id, tr.session_id, tr.environment, tr.provider, tr.model, ${TRACE_STATUS_SQL} as status, ${TRACE_MATURED_AT_SQL} as matured_at, tr.start_time, tr.end_time, tr.received_at,
  ta.cost_usd, ${usageSum("prompt_tokens")}, ${usageSum("completion_tokens")}, ${usageSum("total_tokens")}`;
export const traceSummaryOut = (r: postgres.Row, serviceName: string) => ({
  traceId: r.trace_id,
  sessionId: r.session_id,
  serviceName,
  environment: r.environment ?? null,
  provider: r.provider,
  model: r.model ?? null,
  status: r.status,
  maturedAt: iso(r.matured_at),
  startTime: isoNN(r.start_time),
  endTime: isoNN(r.end_time),
  durationMs: new Date(r.end_time).getTime() - new Date(r.start_time).getTime(),
  usage: {
    promptTokens: Number(r.prompt_tokens),
    completionTokens: Number(r.completion_tokens),
    totalTokens: Number(r.total_tokens),
  },
  costUsd: r.cost_usd ?? null,
  receivedAt: isoNN(r.received_at),
});

export const TraceSpans = t.Object({ traceId: t.String(), serviceName: t.String(), spans: t.Array(Span) });
export const TraceEvents = t.Object({ traceId: t.String(), serviceName: t.String(), events: t.Array(Event) });
export const TraceMetrics = t.Object({
  traceId: t.String(),
  serviceName: t.String(),
  status: t.Union([t.Literal("complete"), t.Literal("processing")]),
  computedAt: Nullable(Iso),
  costUsd: Nullable(t.Number()),
  metrics: Nullable(JsonObject),
});
export const TracesPage = t.Object({ traces: t.Array(TraceSummary), pagination: Pagination });

export const OptionalService = t.Object({
  serviceName: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 200,
      description: "Narrows the lookup to one service (needed only when the id exists in several)",
    }),
  ),
});
