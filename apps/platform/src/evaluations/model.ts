import type postgres from "postgres";
import { t } from "elysia";
import { iso, Iso, isoNN, Nullable } from "../http/schemas.ts";
import { budgetDay, spentToday } from "@cellar/shared/evaluations/store";

/** An evaluator as the platform API returns it (docs/evaluations.md). The judge's key never appears. */
export const Evaluator = t.Object({
  id: t.String(),
  service_name: t.String(),
  name: t.String(),
  version: t.Integer(),
  target: t.Union([t.Literal("session"), t.Literal("trace")]),
  kind: t.Union([t.Literal("judge"), t.Literal("check")]),
  definition: t.Record(t.String(), t.Unknown(), { description: "The current version's definition, without the key" }),
  has_api_key: t.Boolean(),
  status: t.Union([t.Literal("active"), t.Literal("paused")]),
  status_reason: Nullable(t.String()),
  status_changed_at: Nullable(Iso),
  budget: t.Object({
    day: t.String(),
    limit_usd: Nullable(t.Number()),
    spent_usd: t.Number(),
    exhausted: t.Boolean({ description: "Past its daily budget: it judges nothing more until the next UTC day" }),
  }),
  created_at: Iso,
  updated_at: Iso,
});
export const EvaluatorList = t.Object({ evaluators: t.Array(Evaluator) });

export const evaluatorOut = (r: postgres.Row, now: Date) => {
  const limit = r.definition?.daily_budget_usd ?? null;
  const spent = spentToday({ budget_day: r.budget_day ?? null, budget_spent_usd: r.budget_spent_usd }, now);
  return {
    id: r.id,
    service_name: r.service_name,
    name: r.name,
    version: r.version,
    target: r.target,
    kind: r.definition?.judge ? ("judge" as const) : ("check" as const),
    definition: r.definition,
    has_api_key: r.key_encrypted !== null,
    status: r.status,
    status_reason: r.status_reason ?? null,
    status_changed_at: iso(r.status_changed_at),
    budget: { day: budgetDay(now), limit_usd: limit, spent_usd: spent, exhausted: limit !== null && spent >= limit },
    created_at: isoNN(r.created_at),
    updated_at: isoNN(r.updated_at),
  };
};

/** One judgement (GET /evaluators/:id/evaluations). */
export const Evaluation = t.Object({
  id: t.String(),
  evaluator_version: t.Integer(),
  target: t.String(),
  entity_id: t.String(),
  maturation_count: Nullable(t.Integer()),
  transcript_hash: t.String(),
  mode: t.String(),
  status: t.Union([t.Literal("scored"), t.Literal("failed")]),
  score_id: Nullable(t.String()),
  value: Nullable(t.Union([t.Number(), t.Boolean(), t.String()])),
  reason: Nullable(t.String()),
  error: Nullable(t.String()),
  injection_flagged: t.Boolean(),
  attempts: t.Integer(),
  input_tokens: Nullable(t.Integer()),
  output_tokens: Nullable(t.Integer()),
  cost_usd: Nullable(t.Number()),
  duration_ms: Nullable(t.Integer()),
  created_at: Iso,
});
export const EvaluationList = t.Object({ evaluations: t.Array(Evaluation) });

export const evaluationOut = (r: postgres.Row, outputKind: string) => ({
  id: r.id,
  evaluator_version: r.evaluator_version,
  target: r.target,
  entity_id: r.entity_id,
  maturation_count: r.maturation_count ?? null,
  transcript_hash: r.transcript_hash,
  mode: r.mode,
  status: r.status,
  score_id: r.score_id ?? null,
  value: r.label !== null ? r.label : r.value === null ? null : outputKind === "boolean" ? r.value === 1 : r.value,
  reason: r.reason ?? null,
  error: r.error ?? null,
  injection_flagged: r.injection_flagged,
  attempts: r.attempts,
  input_tokens: r.input_tokens ?? null,
  output_tokens: r.output_tokens ?? null,
  cost_usd: r.cost_usd ?? null,
  duration_ms: r.duration_ms ?? null,
  created_at: isoNN(r.created_at),
});

/** A run on past sessions (POST /evaluators/:id/runs, docs/evaluations.md "Runs"). */
export const EvaluationRun = t.Object({
  id: t.String(),
  evaluator_id: t.String(),
  evaluator_version: t.Integer(),
  mode: t.Union([t.Literal("dry_run"), t.Literal("backfill")]),
  status: t.Union([t.Literal("pending"), t.Literal("running"), t.Literal("done"), t.Literal("stopped")]),
  sessions: t.Integer(),
  done: t.Integer(),
  scored: t.Integer(),
  failed: t.Integer(),
  skipped: t.Integer({ description: "Backfill: transcripts this version had judged already" }),
  estimated_usd: Nullable(t.Number()),
  spent_usd: t.Number(),
  results: t.Array(t.Unknown(), {
    description: "Dry run: each session's value, reason or error (nothing else is stored)",
  }),
  error: Nullable(t.String()),
  created_at: Iso,
  finished_at: Nullable(Iso),
});
export const RunStarted = t.Object({
  started: t.Boolean(),
  mode: t.String(),
  sessions: t.Integer(),
  estimate: t.Object({ usd: Nullable(t.Number()), input_tokens: t.Integer(), output_tokens: t.Integer() }),
  run: Nullable(EvaluationRun),
});
