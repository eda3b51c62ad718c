import type postgres from "postgres";
import { t } from "elysia";
import { Iso, isoNN, Nullable } from "../http/schemas.ts";

/** A score as the platform API returns it (docs/scores.md). */
export const Score = t.Object({
  scoreId: t.String(),
  serviceName: t.String(),
  target: t.Union([t.Literal("session"), t.Literal("trace")]),
  sessionId: Nullable(t.String()),
  traceId: Nullable(t.String()),
  name: t.String(),
  dataType: t.Union([t.Literal("numeric"), t.Literal("boolean"), t.Literal("categorical")]),
  value: t.Union([t.Number(), t.Boolean(), t.String()]),
  comment: Nullable(t.String()),
  source: t.Union([t.Literal("api"), t.Literal("end_user"), t.Literal("reviewer"), t.Literal("evaluator")]),
  idempotencyKey: t.String(),
  authorUserId: Nullable(t.String()),
  environment: Nullable(t.String()),
  createdAt: Iso,
  /** Source `evaluator` (docs/evaluations.md): the evaluator version that judged, the judge's tokens and cost. */
  evaluator: t.Optional(
    Nullable(
      t.Object({
        evaluatorId: t.String(),
        version: t.Integer(),
        inputTokens: Nullable(t.Integer()),
        outputTokens: Nullable(t.Integer()),
        costUsd: Nullable(t.Number()),
      }),
    ),
  ),
});
export const SCORE_COLUMNS =
  "sc.id, sc.target, sc.session_id, sc.trace_id, sc.name, sc.data_type, sc.value, sc.label, sc.comment, sc.source, sc.idempotency_key, sc.author_user_id, sc.environment, sc.created_at, sc.evaluator_id, sc.evaluator_version, sc.judge_input_tokens, sc.judge_output_tokens, sc.judge_cost_usd";
export const scoreOut = (r: postgres.Row, serviceName: string) => ({
  scoreId: r.id,
  serviceName,
  target: r.target,
  sessionId: r.session_id ?? null,
  traceId: r.trace_id ?? null,
  name: r.name,
  dataType: r.data_type,
  value: r.data_type === "categorical" ? r.label : r.data_type === "boolean" ? r.value === 1 : r.value,
  comment: r.comment ?? null,
  source: r.source,
  idempotencyKey: r.idempotency_key,
  authorUserId: r.author_user_id ?? null,
  environment: r.environment ?? null,
  createdAt: isoNN(r.created_at),
  evaluator: r.evaluator_id
    ? {
        evaluatorId: r.evaluator_id,
        version: r.evaluator_version,
        inputTokens: r.judge_input_tokens ?? null,
        outputTokens: r.judge_output_tokens ?? null,
        costUsd: r.judge_cost_usd ?? null,
      }
    : null,
});
export const ScoreList = t.Object({ scores: t.Array(Score) });

/**
 * Per name on a session row: how many scores and the mean of the numeric and boolean ones
 * (booleans count 1/0); categorical names give the count per label instead (mean null).
 */
export const ScoreRollup = t.Object({
  count: t.Integer(),
  mean: Nullable(t.Number()),
  labels: t.Optional(t.Record(t.String(), t.Integer())),
});
export const ScoreRollups = t.Record(t.String(), ScoreRollup);
export type ScoreRollups = Record<string, { count: number; mean: number | null; labels?: Record<string, number> }>;

export const DATA_TYPES = ["numeric", "boolean", "categorical"] as const;

/** A declared score name of a service (PUT /scores/configs/:serviceName/:name). */
export const ScoreConfigBody = t.Object(
  {
    data_type: t.Union([t.Literal("numeric"), t.Literal("boolean"), t.Literal("categorical")], {
      error: "invalid data_type: must be numeric, boolean or categorical",
    }),
    categories: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 128 }), {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        error: "invalid categories: 1 to 50 distinct labels of 1 to 128 characters",
      }),
    ),
    min_value: t.Optional(t.Number({ error: "invalid min_value: must be a number" })),
    max_value: t.Optional(t.Number({ error: "invalid max_value: must be a number" })),
    description: t.Optional(t.String({ maxLength: 1000, error: "invalid description: at most 1000 characters" })),
  },
  { additionalProperties: false },
);
export const ScoreConfig = t.Object({
  name: t.String(),
  dataType: t.String(),
  categories: Nullable(t.Array(t.String())),
  minValue: Nullable(t.Number()),
  maxValue: Nullable(t.Number()),
  description: Nullable(t.String()),
  updatedAt: Iso,
});
export const scoreConfigOut = (r: postgres.Row) => ({
  name: r.name,
  dataType: r.data_type,
  categories: r.categories ?? null,
  minValue: r.min_value ?? null,
  maxValue: r.max_value ?? null,
  description: r.description ?? null,
  updatedAt: isoNN(r.updated_at),
});
export const ScoreConfigList = t.Object({ configs: t.Array(ScoreConfig) });
