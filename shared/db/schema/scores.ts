import { sql } from "drizzle-orm";
import { doublePrecision, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { serviceFk, tenantId, traceServiceId, ts } from "./columns.ts";

export const SCORE_SOURCES = ["api", "end_user", "reviewer", "evaluator"] as const;
export const SCORE_DATA_TYPES = ["numeric", "boolean", "categorical"] as const;

/**
 * One score of a session or a trace (migration 0013, docs/scores.md). Keyed by the natural key
 * (service + session id or trace id), not by the session or trace row, so a score that arrives
 * first is kept. `value` holds numbers and booleans (1/0), `label` a category's label.
 */
export const scores = pgTable(
  "scores",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    target: text("target", { enum: ["session", "trace"] }).notNull(),
    sessionId: text("session_id"),
    traceId: text("trace_id"),
    name: text("name").notNull(),
    dataType: text("data_type", { enum: SCORE_DATA_TYPES }).notNull(),
    value: doublePrecision("value"),
    label: text("label"),
    comment: text("comment"),
    source: text("source", { enum: SCORE_SOURCES }).notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    authorUserId: uuid("author_user_id"),
    environment: text("environment"),
    createdAt: ts("created_at").notNull().defaultNow(),
    // Source `evaluator` (migration 0029, docs/evaluations.md): which evaluator version judged, and
    // what the judge's call cost (tokens, USD by the price table; null for a deterministic check).
    evaluatorId: uuid("evaluator_id"),
    evaluatorVersion: integer("evaluator_version"),
    judgeInputTokens: integer("judge_input_tokens"),
    judgeOutputTokens: integer("judge_output_tokens"),
    judgeCostUsd: doublePrecision("judge_cost_usd"),
  },
  (t) => [
    primaryKey({ name: "scores_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("scores_trace_service_id_fkey", t),
    uniqueIndex("scores_service_idempotency_uq").on(t.traceServiceId, t.idempotencyKey, t.tenantId),
    index("scores_session_idx").on(t.traceServiceId, t.sessionId, t.name).where(sql`session_id is not null`),
    index("scores_trace_idx").on(t.traceServiceId, t.traceId, t.name).where(sql`trace_id is not null`),
    index("scores_tenant_created_idx").on(t.tenantId, t.createdAt),
    // The agreement read starts from a service's reviewer scores of one name (migration 0037).
    index("scores_reviewer_idx")
      .on(t.traceServiceId, t.name, t.sessionId)
      .where(sql`source = 'reviewer' and session_id is not null`),
  ],
);

/** A score name a service declares: the dashboard offers it, the platform API checks against it. */
export const scoreConfigs = pgTable(
  "score_configs",
  {
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    name: text("name").notNull(),
    dataType: text("data_type", { enum: SCORE_DATA_TYPES }).notNull(),
    categories: text("categories").array(),
    minValue: doublePrecision("min_value"),
    maxValue: doublePrecision("max_value"),
    description: text("description"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "score_configs_pk", columns: [t.traceServiceId, t.name, t.tenantId] }),
    serviceFk("score_configs_trace_service_id_fkey", t),
  ],
);
