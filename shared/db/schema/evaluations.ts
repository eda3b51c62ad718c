import { sql } from "drizzle-orm";
import {
  boolean,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
  foreignKey,
} from "drizzle-orm/pg-core";
import { requiredUuid, serviceFk, tenantId, traceServiceId, ts } from "./columns.ts";
import { timeOrderedId } from "./ids.ts";

/**
 * An evaluator of a service (migration 0029, docs/evaluations.md): a model judge or a deterministic
 * check, its current version's definition (shared/evaluations/definition.ts) without the judge's
 * key, which is sealed apart like a webhook secret (the row id is its associated data). Paused
 * with a reason when the judge refused the key or the day's budget ran out.
 */
export const evaluators = pgTable(
  "evaluators",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    name: text("name").notNull(),
    version: integer("version").notNull().default(1),
    target: text("target", { enum: ["session", "trace"] }).notNull(),
    definition: jsonb("definition").$type<Record<string, unknown>>().notNull(),
    keyEncrypted: text("key_encrypted"),
    status: text("status", { enum: ["active", "paused"] })
      .notNull()
      .default("active"),
    statusReason: text("status_reason"),
    statusChangedAt: ts("status_changed_at"),
    /** The UTC day `budgetSpentUsd` counts (a new day starts from zero). */
    budgetDay: date("budget_day"),
    budgetSpentUsd: doublePrecision("budget_spent_usd").notNull().default(0),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "evaluators_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("evaluators_trace_service_id_fkey", t),
    uniqueIndex("evaluators_service_name_uq").on(t.traceServiceId, t.name, t.tenantId),
  ],
);

/** Every version an evaluator had: a result names the version that made it. */
export const evaluatorVersions = pgTable(
  "evaluator_versions",
  {
    evaluatorId: uuid("evaluator_id").notNull(),
    tenantId: requiredUuid("tenant_id"),
    version: integer("version").notNull(),
    definition: jsonb("definition").$type<Record<string, unknown>>().notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "evaluator_versions_pkey", columns: [t.evaluatorId, t.version, t.tenantId] }),
    foreignKey({
      name: "evaluator_versions_evaluator_fkey",
      columns: [t.evaluatorId, t.tenantId],
      foreignColumns: [evaluators.id, evaluators.tenantId],
    }).onDelete("cascade"),
  ],
);

/**
 * One judgement of one transcript by one evaluator version: unique on the transcript's hash, so a
 * re-maturation that changed nothing is not judged again and a redelivered message finds its row.
 * A scored row names its score; a failed one says why.
 */
export const evaluations = pgTable(
  "evaluations",
  {
    id: uuid("id").notNull().default(timeOrderedId),
    tenantId: requiredUuid("tenant_id"),
    traceServiceId: traceServiceId(),
    evaluatorId: uuid("evaluator_id").notNull(),
    evaluatorVersion: integer("evaluator_version").notNull(),
    target: text("target", { enum: ["session", "trace"] }).notNull(),
    /** The session id or trace id. */
    entityId: text("entity_id").notNull(),
    maturationCount: integer("maturation_count"),
    transcriptHash: text("transcript_hash").notNull(),
    mode: text("mode", { enum: ["live", "backfill"] })
      .notNull()
      .default("live"),
    status: text("status", { enum: ["scored", "failed"] }).notNull(),
    scoreId: uuid("score_id"),
    value: doublePrecision("value"),
    label: text("label"),
    reason: text("reason"),
    error: text("error"),
    /** A tool result of the transcript carried a prompt-injection finding. */
    injectionFlagged: boolean("injection_flagged").notNull().default(false),
    attempts: integer("attempts").notNull().default(1),
    inputTokens: integer("input_tokens"),
    outputTokens: integer("output_tokens"),
    costUsd: doublePrecision("cost_usd"),
    durationMs: integer("duration_ms"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "evaluations_pkey", columns: [t.id, t.tenantId] }),
    foreignKey({
      name: "evaluations_evaluator_fkey",
      columns: [t.evaluatorId, t.tenantId],
      foreignColumns: [evaluators.id, evaluators.tenantId],
    }).onDelete("cascade"),
    uniqueIndex("evaluations_once_uq").on(
      t.evaluatorId,
      t.evaluatorVersion,
      t.target,
      t.entityId,
      t.transcriptHash,
      t.tenantId,
    ),
    index("evaluations_evaluator_created_idx").on(t.evaluatorId, t.createdAt),
    // The failed ones, newest first (migration 0036): rare, so the list would otherwise read every judgement.
    index("evaluations_failed_idx").on(t.evaluatorId, t.createdAt, t.id).where(sql`status = 'failed'`),
    index("evaluations_entity_idx").on(t.traceServiceId, t.target, t.entityId),
  ],
);

/**
 * The claim on one judgement before its judge is called (migration 0042, docs/evaluations.md
 * "One judge call per judgement"): keyed as the evaluation it leads to. Taken while no claim is
 * unexpired and no evaluation exists; `claimed_until` 'infinity' once the judgement is recorded
 * (in the record's transaction), so a copy of the maturation on another dispatcher process never
 * calls the judge for it again. A crash between claim and record leaves a claim that ends; the
 * redelivered message claims again. Judged claims are pruned a day after (the evaluation row
 * answers from then on).
 */
export const evaluationClaims = pgTable(
  "evaluation_claims",
  {
    evaluatorId: uuid("evaluator_id").notNull(),
    tenantId: requiredUuid("tenant_id"),
    evaluatorVersion: integer("evaluator_version").notNull(),
    target: text("target", { enum: ["session", "trace"] }).notNull(),
    entityId: text("entity_id").notNull(),
    transcriptHash: text("transcript_hash").notNull(),
    claimedUntil: ts("claimed_until").notNull(),
    /** When it was last claimed or judged (pruning). */
    claimedAt: ts("claimed_at").notNull(),
  },
  (t) => [
    primaryKey({
      name: "evaluation_claims_pkey",
      columns: [t.evaluatorId, t.evaluatorVersion, t.target, t.entityId, t.transcriptHash, t.tenantId],
    }),
    foreignKey({
      name: "evaluation_claims_evaluator_fkey",
      columns: [t.evaluatorId, t.tenantId],
      foreignColumns: [evaluators.id, evaluators.tenantId],
    }).onDelete("cascade"),
  ],
);

/**
 * A run of an evaluator version on chosen past matured sessions (migration 0032, docs/evaluations.md
 * "Runs"): a dry run keeps its results on the run only; a backfill stores scores like live ones.
 * The dispatcher claims it (heartbeat_at) and works through `session_ids` from `next_index`.
 */
export const evaluationRuns = pgTable(
  "evaluation_runs",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: requiredUuid("tenant_id"),
    evaluatorId: uuid("evaluator_id").notNull(),
    evaluatorVersion: integer("evaluator_version").notNull(),
    mode: text("mode", { enum: ["dry_run", "backfill"] }).notNull(),
    status: text("status", { enum: ["pending", "running", "done", "stopped"] })
      .notNull()
      .default("pending"),
    sessionIds: text("session_ids").array().notNull(),
    nextIndex: integer("next_index").notNull().default(0),
    estimatedUsd: doublePrecision("estimated_usd"),
    spentUsd: doublePrecision("spent_usd").notNull().default(0),
    scored: integer("scored").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    skipped: integer("skipped").notNull().default(0),
    results: jsonb("results").$type<unknown[]>().notNull().default([]),
    error: text("error"),
    heartbeatAt: ts("heartbeat_at"),
    createdBy: uuid("created_by"),
    createdAt: ts("created_at").notNull().defaultNow(),
    finishedAt: ts("finished_at"),
  },
  (t) => [
    primaryKey({ name: "evaluation_runs_pkey", columns: [t.id, t.tenantId] }),
    foreignKey({
      name: "evaluation_runs_evaluator_fkey",
      columns: [t.evaluatorId, t.tenantId],
      foreignColumns: [evaluators.id, evaluators.tenantId],
    }).onDelete("cascade"),
    index("evaluation_runs_evaluator_idx").on(t.evaluatorId, t.createdAt),
  ],
);
