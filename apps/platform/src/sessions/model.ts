import type postgres from "postgres";
import { t } from "elysia";
import { Iso, iso, isoNN, Nullable } from "../http/schemas.ts";
import { ScoreRollups } from "../scores/model.ts";

/** Response shapes of sessions, and the row mapper that produces them (kept together). */
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
