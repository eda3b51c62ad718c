import type postgres from "postgres";
import { t } from "elysia";
import { AnyJson, Iso, iso, isoNN, JsonObject, Nullable } from "./http/schemas.ts";
import { Score, ScoreRollups } from "./scores/model.ts";

/**
 * Response shapes of the read resources (camelCase, ISO 8601 times) and the row mappers that
 * produce them: the schema and its mapper sit together so they cannot drift apart.
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
export const Trace = t.Composite([
  TraceSummary,
  t.Object({
    request: AnyJson,
    responses: t.Array(AnyJson),
    metrics: Nullable(JsonObject),
    spanCount: t.Integer(),
    // Additive (docs/scores.md): the trace's scores.
    scores: t.Optional(t.Array(Score)),
  }),
]);
/**
 * Token usage summed over the payload's responses (validated integers at ingest): the columns
 * written with the row since migration 0015, else summed from an older row's jsonb payload.
 */
const usageSum = (key: string) =>
  `coalesce(tr.${key}, (select coalesce(sum((r->'usage'->>'${key}')::bigint), 0) from jsonb_array_elements(tr.payload->'responses') r))::int8 as ${key}`;
export const TRACE_COLUMNS = `tr.trace_id, tr.session_id, tr.environment, tr.provider, tr.model, tr.status, tr.matured_at, tr.start_time, tr.end_time, tr.received_at,
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

export const Issue = t.Object({
  issueId: t.String(),
  serviceName: t.String(),
  fingerprint: t.String(),
  detector: t.String(),
  title: t.String(),
  severity: t.String({ description: "low | medium | high | critical" }),
  firstSeenAt: Iso,
  lastSeenAt: Iso,
  occurrences: t.Integer(),
  affectedSessions: t.Integer(),
});
export const ISSUE_COLUMNS =
  "i.id, i.fingerprint, i.detector, i.title, i.severity, i.first_seen_at, i.last_seen_at, i.occurrences, i.affected_sessions";
export const issueOut = (r: postgres.Row, serviceName: string) => ({
  issueId: r.id,
  serviceName,
  fingerprint: r.fingerprint,
  detector: r.detector,
  title: r.title,
  severity: r.severity,
  firstSeenAt: isoNN(r.first_seen_at),
  lastSeenAt: isoNN(r.last_seen_at),
  occurrences: r.occurrences,
  affectedSessions: r.affected_sessions,
});

export const Finding = t.Object({
  findingId: t.String(),
  issueId: t.String(),
  serviceName: t.String(),
  sessionId: t.String(),
  traceId: Nullable(t.String()),
  spanId: Nullable(t.String()),
  detector: t.String(),
  fingerprint: t.String(),
  severity: t.String({ description: "low | medium | high | critical" }),
  title: t.String(),
  evidence: JsonObject,
  occurredAt: Iso,
  createdAt: Iso,
});
export const FINDING_COLUMNS =
  "f.id, f.issue_id, f.session_id, f.trace_id, f.span_id, f.detector, f.fingerprint, f.severity, f.title, f.evidence, f.occurred_at, f.created_at";
export const findingOut = (r: postgres.Row, serviceName: string) => ({
  findingId: r.id,
  issueId: r.issue_id,
  serviceName,
  sessionId: r.session_id,
  traceId: r.trace_id ?? null,
  spanId: r.span_id ?? null,
  detector: r.detector,
  fingerprint: r.fingerprint,
  severity: r.severity,
  title: r.title,
  evidence: r.evidence ?? {},
  occurredAt: isoNN(r.occurred_at),
  createdAt: isoNN(r.created_at),
});

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
