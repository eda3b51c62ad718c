import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  type PgColumn,
  pgTable,
  primaryKey,
  real,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { requiredUuid, serviceFk, tenantId, traceServiceId, ts } from "./columns.ts";
import { timeOrderedId } from "./ids.ts";
import { tenantForeignKey } from "./tenant-keys.ts";
import { sessions, traces } from "./telemetry.ts";

/**
 * The tenant of a row whose parent key already carries it (migration 0026): a plain column, the
 * composite key to the session or trace keeping it equal to the parent's, deletes cascading
 * from the tenant through sessions and traces. A foreign key of its own was a locking lookup of
 * the tenant's row per inserted row (docs/maturation.md).
 */
const parentTenantId = () => requiredUuid("tenant_id");
const sessionPk = () => requiredUuid("session_pk");
/** The widened foreign key to the session (migration 0019), by tenant too. */
const sessionFk = (table: string, t: { sessionPk: PgColumn; tenantId: PgColumn }) =>
  tenantForeignKey(`${table}_session_pk_sessions_id_fk`, { column: t.sessionPk, tenantId: t.tenantId }, sessions);

/** The materialized conversation, rewritten whole at each maturation. */
export const transcriptItems = pgTable(
  "transcript_items",
  {
    sessionPk: sessionPk(),
    position: integer("position").notNull(),
    tenantId: parentTenantId(),
    itemId: text("item_id").notNull(),
    kind: text("kind").notNull(),
    role: text("role"),
    timestamp: ts("timestamp").notNull(),
    traceId: text("trace_id"),
    spanId: text("span_id"),
    /**
     * What maturation computed about the item (shared/analysis/transcript-source.ts); rows
     * written before migration 0018 hold the item in full.
     */
    item: jsonb("item").$type<Record<string, unknown>>().notNull(),
    /** The trace whose stored payload holds the item's content, at `source` (null: `item` holds it). */
    sourceTracePk: uuid("source_trace_pk"),
    source: text("source"),
    /** Hash of the row but its position: a re-maturation rewrites only rows whose digest changed. */
    digest: bigint("digest", { mode: "bigint" }),
  },
  (t) => [
    primaryKey({ name: "transcript_items_pkey", columns: [t.sessionPk, t.position, t.tenantId] }),
    sessionFk("transcript_items", t),
    // One row per item id in a session, and the item read by id (migration 0024: the hash index of
    // 0022 left the rule to the writer, which let duplicates through).
    uniqueIndex("transcript_items_item_uq").on(t.sessionPk, t.itemId, t.tenantId),
  ],
);

/**
 * A session's transcript as one row per trace (migration 0040): consecutive items of one trace,
 * each item's row as `transcript_items` holds it (with its position) in `items`. Sessions matured
 * before keep their `transcript_items` rows until their next maturation replaces them; reads take
 * either shape (shared/analysis/transcript-rows.ts).
 */
export const transcriptRuns = pgTable(
  "transcript_runs",
  {
    sessionPk: sessionPk(),
    /** The first item's position. */
    position: integer("position").notNull(),
    tenantId: parentTenantId(),
    lastPosition: integer("last_position").notNull(),
    itemIds: text("item_ids").array().notNull(),
    items: jsonb("items").$type<Array<Record<string, unknown>>>().notNull(),
    /** Hash of the run: a re-maturation rewrites only runs whose digest changed (null: always). */
    digest: bigint("digest", { mode: "bigint" }),
  },
  (t) => [
    primaryKey({ name: "transcript_runs_pkey", columns: [t.sessionPk, t.position, t.tenantId] }),
    sessionFk("transcript_runs", t),
  ],
);

/**
 * One row per session with what the last maturation computed. `throughIngestedAt` is the newest
 * span/event ingestion time the materialization included (transcript `status` compares against it).
 */
export const sessionAnalyses = pgTable(
  "session_analyses",
  {
    sessionPk: sessionPk(),
    tenantId: parentTenantId(),
    traceServiceId: traceServiceId(),
    sessionId: text("session_id").notNull(),
    maturationCount: integer("maturation_count").notNull(),
    computedAt: ts("computed_at").notNull(),
    throughIngestedAt: ts("through_ingested_at").notNull(),
    /** `sessions.activity_seq` this materialization included; a higher live value = `partial`. */
    throughActivitySeq: bigint("through_activity_seq", { mode: "number" }).notNull(),
    itemCount: integer("item_count").notNull(),
    truncated: boolean("truncated").notNull().default(false),
    // Rollups as columns so sessions/filtered can filter and sort on them.
    durationMs: integer("duration_ms").notNull().default(0),
    turns: integer("turns").notNull().default(0),
    modelCalls: integer("model_calls").notNull().default(0),
    toolCalls: integer("tool_calls").notNull().default(0),
    totalTokens: integer("total_tokens").notNull().default(0),
    errors: integer("errors").notNull().default(0),
    problems: integer("problems").notNull().default(0),
    costUsd: doublePrecision("cost_usd"),
    // metrics.latencyP50Ms / P95Ms / MaxMs as typed columns (null when the key is not a number),
    // so those metric filters are index ranges (migration 0009, docs/platform-api.md).
    latencyP50Ms: doublePrecision("latency_p50_ms"),
    latencyP95Ms: doublePrecision("latency_p95_ms"),
    latencyMaxMs: doublePrecision("latency_max_ms"),
    metrics: jsonb("metrics").$type<Record<string, unknown>>().notNull(),
    costByModel: jsonb("cost_by_model").$type<unknown[]>().notNull().default([]),
    toolCosts: jsonb("tool_costs").$type<unknown[]>().notNull().default([]),
    tldr: text("tldr"),
    tldrSource: text("tldr_source"),
  },
  (t) => [
    primaryKey({ name: "session_analyses_pkey", columns: [t.sessionPk, t.tenantId] }),
    sessionFk("session_analyses", t),
    index("session_analyses_service_idx").on(t.tenantId, t.traceServiceId),
    // One per filterable/sortable rollup: service, value, row id = the search's order and keyset.
    index("session_analyses_duration_idx").on(t.traceServiceId, t.durationMs, t.sessionPk),
    index("session_analyses_turns_idx").on(t.traceServiceId, t.turns, t.sessionPk),
    index("session_analyses_model_calls_idx").on(t.traceServiceId, t.modelCalls, t.sessionPk),
    index("session_analyses_tool_calls_idx").on(t.traceServiceId, t.toolCalls, t.sessionPk),
    index("session_analyses_total_tokens_idx").on(t.traceServiceId, t.totalTokens, t.sessionPk),
    index("session_analyses_errors_idx").on(t.traceServiceId, t.errors, t.sessionPk),
    index("session_analyses_problems_idx").on(t.traceServiceId, t.problems, t.sessionPk),
    index("session_analyses_cost_idx").on(t.traceServiceId, t.costUsd, t.sessionPk),
    // The total of a costUsd filter, counted on entries a third smaller (migration 0023).
    index("session_analyses_cost_count_idx").on(t.traceServiceId, t.costUsd),
    index("session_analyses_latency_p50_idx").on(t.traceServiceId, t.latencyP50Ms, t.sessionPk),
    index("session_analyses_latency_p95_idx").on(t.traceServiceId, t.latencyP95Ms, t.sessionPk),
    index("session_analyses_latency_max_idx").on(t.traceServiceId, t.latencyMaxMs, t.sessionPk),
  ],
);

export const traceAnalyses = pgTable(
  "trace_analyses",
  {
    tracePk: uuid("trace_pk").notNull(),
    tenantId: parentTenantId(),
    traceServiceId: traceServiceId(),
    traceId: text("trace_id").notNull(),
    computedAt: ts("computed_at").notNull(),
    costUsd: doublePrecision("cost_usd"),
    /** In full on rows written before migration 0021 (or that its trace row cannot rebuild), else null. */
    metrics: jsonb("metrics").$type<Record<string, unknown>>(),
    /** What differs from the trace row's base (migration 0021, shared/db/trace-metrics.ts); null: nothing. */
    metricsDelta: jsonb("metrics_delta").$type<Record<string, unknown>>(),
  },
  // traces/filtered sorted or filtered by costUsd (migration 0009).
  (t) => [
    primaryKey({ name: "trace_analyses_pkey", columns: [t.tracePk, t.tenantId] }),
    tenantForeignKey("trace_analyses_trace_pk_traces_id_fk", { column: t.tracePk, tenantId: t.tenantId }, traces),
    index("trace_analyses_cost_idx").on(t.traceServiceId, t.costUsd, t.tracePk),
  ],
);

/** The same problem across sessions, keyed by fingerprint per service. */
export const issues = pgTable(
  "issues",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    fingerprint: text("fingerprint").notNull(),
    detector: text("detector").notNull(),
    title: text("title").notNull(),
    severity: text("severity").notNull(),
    firstSeenAt: ts("first_seen_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull(),
    occurrences: integer("occurrences").notNull().default(0),
    affectedSessions: integer("affected_sessions").notNull().default(0),
  },
  (t) => [
    primaryKey({ name: "issues_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("issues_trace_service_id_trace_services_id_fk", t),
    uniqueIndex("issues_service_fingerprint_uq").on(t.traceServiceId, t.fingerprint, t.tenantId),
  ],
);

/** One detected problem in one session (replaced at each maturation of that session). */
export const findings = pgTable(
  "findings",
  {
    id: uuid("id").notNull().default(timeOrderedId),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    sessionPk: sessionPk(),
    sessionId: text("session_id").notNull(),
    issueId: uuid("issue_id").notNull(),
    traceId: text("trace_id"),
    spanId: text("span_id"),
    detector: text("detector").notNull(),
    fingerprint: text("fingerprint").notNull(),
    severity: text("severity").notNull(),
    title: text("title").notNull(),
    evidence: jsonb("evidence").$type<Record<string, unknown>>().notNull(),
    occurredAt: ts("occurred_at").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "findings_pkey", columns: [t.id, t.tenantId] }),
    sessionFk("findings", t),
    serviceFk("findings_trace_service_id_trace_services_id_fk", t),
    tenantForeignKey("findings_issue_id_issues_id_fk", { column: t.issueId, tenantId: t.tenantId }, issues),
    index("findings_session_idx").on(t.sessionPk),
    index("findings_issue_idx").on(t.issueId),
    index("findings_service_idx").on(t.tenantId, t.traceServiceId, t.occurredAt),
  ],
);

/** Tool definitions seen in `request.tools`, deduplicated per service by name + schema hash. */
export const toolSchemas = pgTable(
  "tool_schemas",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    name: text("name").notNull(),
    schemaHash: text("schema_hash").notNull(),
    schema: jsonb("schema").$type<Record<string, unknown>>().notNull(),
    firstSeenAt: ts("first_seen_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull(),
  },
  (t) => [
    primaryKey({ name: "tool_schemas_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("tool_schemas_trace_service_id_trace_services_id_fk", t),
    uniqueIndex("tool_schemas_service_hash_uq").on(t.traceServiceId, t.name, t.schemaHash, t.tenantId),
  ],
);

export const sessionToolSchemas = pgTable(
  "session_tool_schemas",
  {
    sessionPk: sessionPk(),
    toolSchemaId: uuid("tool_schema_id").notNull(),
    /** The session's (migration 0019): the key and both foreign keys include it. */
    tenantId: requiredUuid("tenant_id"),
  },
  (t) => [
    primaryKey({ name: "session_tool_schemas_pkey", columns: [t.sessionPk, t.toolSchemaId, t.tenantId] }),
    sessionFk("session_tool_schemas", t),
    tenantForeignKey(
      "session_tool_schemas_tool_schema_id_tool_schemas_id_fk",
      { column: t.toolSchemaId, tenantId: t.tenantId },
      toolSchemas,
    ),
  ],
);

/** Per-service intent definitions: what users come to do, matched against their messages. */
export const intentDefinitions = pgTable(
  "intent_definitions",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    examples: text("examples").array().notNull().default([]),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "intent_definitions_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("intent_definitions_trace_service_id_trace_services_id_fk", t),
    uniqueIndex("intent_definitions_service_name_uq").on(t.traceServiceId, t.name, t.tenantId),
  ],
);

export const sessionIntents = pgTable(
  "session_intents",
  {
    sessionPk: sessionPk(),
    intentId: uuid("intent_id").notNull(),
    tenantId: tenantId(),
    score: real("score").notNull(),
    evidence: jsonb("evidence").$type<Record<string, unknown>>().notNull(),
  },
  (t) => [
    primaryKey({ name: "session_intents_pkey", columns: [t.sessionPk, t.intentId, t.tenantId] }),
    sessionFk("session_intents", t),
    tenantForeignKey(
      "session_intents_intent_id_intent_definitions_id_fk",
      { column: t.intentId, tenantId: t.tenantId },
      intentDefinitions,
    ),
  ],
);

/** Per-service detector thresholds over the defaults (apps/processor/src/analysis/config.ts). */
export const detectorSettings = pgTable(
  "detector_settings",
  {
    traceServiceId: traceServiceId(),
    tenantId: tenantId(),
    settings: jsonb("settings").$type<Record<string, Record<string, number | boolean>>>().notNull().default({}),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "detector_settings_pkey", columns: [t.traceServiceId, t.tenantId] }),
    serviceFk("detector_settings_trace_service_id_fkey", t),
  ],
);
