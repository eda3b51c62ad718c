import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { requiredUuid, serviceFk, tenantId, traceServiceId, ts } from "./columns.ts";
import { timeOrderedId } from "./ids.ts";
import { tenantForeignKey } from "./tenant-keys.ts";

/**
 * Rows under a session (traces, events) or a trace (spans) carry tenant, service and session
 * columns for filtering only, without foreign keys: the parent's key already cascades deletes,
 * and every extra key is a locking lookup per inserted row (~20% of Postgres CPU per ingested
 * trace, docs/performance.md).
 */
const denormalized = requiredUuid;

/** Bytes (a deflated payload, shared/db/payload-codec.ts). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });

export const ENTITY_STATUSES = ["active", "matured"] as const;

/**
 * One conversation. `lastIngestedAt` is wall-clock time of the newest span or event written
 * (the idle check), `lastActivityAt` the newest payload time (what users see).
 */
export const sessions = pgTable(
  "sessions",
  {
    id: uuid("id").notNull().default(timeOrderedId),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    sessionId: text("session_id").notNull(),
    environment: text("environment"),
    status: text("status", { enum: ENTITY_STATUSES }).notNull().default("active"),
    firstActivityAt: ts("first_activity_at").notNull(),
    lastActivityAt: ts("last_activity_at").notNull(),
    lastIngestedAt: ts("last_ingested_at").notNull(),
    maturationCount: integer("maturation_count").notNull().default(0),
    maturedAt: ts("matured_at"),
    /** +1 for every write that brought new spans or events; serialized by the row lock. */
    activitySeq: bigint("activity_seq", { mode: "number" }).notNull().default(0),
    /** Highest maturation_count whose MATURED message was published: lower = publish still owed. */
    publishedCount: integer("published_count").notNull().default(0),
    labels: jsonb("labels").$type<string[]>().notNull().default([]),
    createdAt: ts("created_at").notNull().defaultNow(),
    /** Failed maturation attempts since the last success; retried at `maturationRetryAt` (backoff). */
    maturationFailures: integer("maturation_failures").notNull().default(0),
    maturationRetryAt: ts("maturation_retry_at"),
    /** Set when the attempts ran out: parked until new activity arrives (docs/maturation.md). */
    maturationFailedAt: ts("maturation_failed_at"),
    maturationError: text("maturation_error"),
  },
  (t) => [
    // Keys and keys into keys end with tenant_id (migration 0019, docs/scaling.md "Sharding by tenant").
    primaryKey({ name: "sessions_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("sessions_trace_service_id_trace_services_id_fk", t),
    index("sessions_maturation_failed_idx").on(t.maturationFailedAt).where(sql`maturation_failed_at is not null`),
    uniqueIndex("sessions_service_session_uq").on(t.traceServiceId, t.sessionId, t.tenantId),
    index("sessions_tenant_service_activity_idx").on(t.tenantId, t.traceServiceId, t.lastActivityAt),
    index("sessions_active_ingested_idx").on(t.status, t.lastIngestedAt),
    index("sessions_unpublished_idx").on(t.maturedAt).where(sql`published_count < maturation_count`),
  ],
);

/**
 * One ingested model call (a trace payload): request plus 1-2 responses, kept whole. Written once,
 * never updated (migration 0016): its maturation state is in `pendingTraces`.
 */
export const traces = pgTable(
  "traces",
  {
    id: uuid("id").notNull().default(timeOrderedId),
    tenantId: denormalized("tenant_id"),
    traceServiceId: denormalized("trace_service_id"),
    sessionPk: uuid("session_pk").notNull(),
    traceId: text("trace_id").notNull(),
    sessionId: text("session_id").notNull(),
    environment: text("environment"),
    provider: text("provider").notNull(),
    model: text("model"),
    startTime: ts("start_time").notNull(),
    endTime: ts("end_time").notNull(),
    /**
     * The whole payload as received, unknown fields included: in `trace_payloads` (deflated,
     * rows since migration 0015), or jsonb here (older rows until the backfill moves them).
     * Read through decodePayload (shared/db/payload-codec.ts).
     */
    payload: jsonb("payload").$type<Record<string, unknown>>(),
    /**
     * The payload's size as JSON text (UTF-8 bytes), written with it (migration 0025): what it
     * inflates to, so maturation can page histories by it. Null on older rows (counted at the cap).
     */
    payloadBytes: integer("payload_bytes"),
    /** Token usage summed over the responses, and whether an OTLP call waits for its messages (null on rows not yet backfilled). */
    promptTokens: bigint("prompt_tokens", { mode: "number" }),
    completionTokens: bigint("completion_tokens", { mode: "number" }),
    totalTokens: bigint("total_tokens", { mode: "number" }),
    awaitsMessages: boolean("awaits_messages"),
    receivedAt: ts("received_at").notNull(),
    ingestedAt: ts("ingested_at").notNull().defaultNow(),
    /**
     * Its derived spans' ids as signed 64-bit integers (shared/spans.ts `spanIdKey`), for the
     * bare-id lookup through `traces_span_keys_idx` (migration 0022); null on traces written
     * before, whose ids are rows of `spanIds`.
     */
    spanKeys: bigint("span_keys", { mode: "bigint" }).array(),
    /**
     * A trace's maturation state before migration 0016, kept for older rows, never read or
     * written since: new rows leave them null. The state lives in `pendingTraces` (active or
     * publish owed) and `trace_analyses.computed_at` (the maturation time).
     */
    legacyStatus: text("status", { enum: ENTITY_STATUSES }),
    legacyMaturationCount: integer("maturation_count"),
    legacyMaturedAt: ts("matured_at"),
    legacyPublishedCount: integer("published_count"),
  },
  (t) => [
    primaryKey({ name: "traces_pkey", columns: [t.id, t.tenantId] }),
    tenantForeignKey("traces_session_pk_sessions_id_fk", { column: t.sessionPk, tenantId: t.tenantId }, sessions),
    uniqueIndex("traces_service_trace_uq").on(t.traceServiceId, t.traceId, t.tenantId),
    index("traces_session_idx").on(t.sessionPk, t.startTime),
    // Recent traces of a service (latency norms, trace lists).
    index("traces_service_start_idx").on(t.traceServiceId, t.startTime),
    // Rows written before migration 0015, for the payload backfill (empty once it has run).
    index("traces_jsonb_payload_idx").on(t.id).where(sql`payload is not null`),
    // A span id -> its trace (migration 0022; `fastupdate = off`, not expressed here: no pending list to read).
    index("traces_span_keys_idx").using("gin", t.spanKeys).where(sql`span_keys is not null`),
  ],
);

/**
 * A trace still pending (migration 0016, shared/maturation/state.ts owns it): inserted with the
 * trace, `maturedAt` set when it matures (the MATURED publish then owed), deleted once that
 * publish is recorded. Keyed by `ingestedAt` first: the sweep and the batch key read by it, and
 * a trace's row is found through the trace's own `ingested_at`. No foreign key (a locking lookup
 * per insert); rows whose trace is gone are pruned by the sweep. fillfactor 50 (not expressed in
 * drizzle): the one update stays HOT.
 */
export const pendingTraces = pgTable(
  "pending_traces",
  {
    ingestedAt: ts("ingested_at").notNull(),
    tracePk: uuid("trace_pk").notNull(),
    tenantId: requiredUuid("tenant_id"),
    maturedAt: ts("matured_at"),
    /**
     * What the trace contributes to its own analysis (`{ request: { model }, responses }` as JSON
     * text), written with the row while the payload is in memory and cleared by the claim
     * (migration 0028, docs/analyse-once.md); null on older rows.
     */
    contribution: text("contribution"),
  },
  (t) => [primaryKey({ name: "pending_traces_pkey", columns: [t.ingestedAt, t.tracePk, t.tenantId] })],
);

/**
 * A trace's payload as the app stored it (migration 0015): the JSON text in jsonb key order,
 * deflated (shared/db/payload-codec.ts). Written once with the trace, never updated.
 */
export const tracePayloads = pgTable(
  "trace_payloads",
  {
    tenantId: denormalized("tenant_id"),
    tracePk: uuid("trace_pk").notNull(),
    payloadZ: bytea("payload_z").notNull(),
    /**
     * A long trace's session digest (migration 0031, apps/processor/src/analysis/digest.ts): its
     * request's re-sent history as chain hashes, deflated; null on short traces and older rows.
     */
    digestZ: bytea("digest_z"),
  },
  // tenant_id in the key (docs/scaling.md), after trace_pk: a deleted trace's cascade seeks by trace_pk.
  (t) => [
    primaryKey({ name: "trace_payloads_pkey", columns: [t.tracePk, t.tenantId] }),
    tenantForeignKey("trace_payloads_trace_pk_fkey", { column: t.tracePk, tenantId: t.tenantId }, traces),
  ],
);

/**
 * Spans of traces written before migration 0017, as they were stored (one root span per trace and
 * one `llm` span per response). Newer traces have no rows here: their spans are derived from the
 * stored payload when read (shared/spans.ts, docs/otlp.md "Spans"); reads take these rows first.
 */
export const spans = pgTable(
  "spans",
  {
    tenantId: denormalized("tenant_id"),
    traceServiceId: denormalized("trace_service_id"),
    sessionPk: denormalized("session_pk"),
    tracePk: uuid("trace_pk").notNull(),
    spanId: text("span_id").notNull(),
    parentSpanId: text("parent_span_id"),
    traceId: text("trace_id").notNull(),
    sessionId: text("session_id").notNull(),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    startTime: ts("start_time").notNull(),
    endTime: ts("end_time").notNull(),
    attributes: jsonb("attributes").$type<Record<string, unknown>>().notNull().default({}),
    ingestedAt: ts("ingested_at").notNull().defaultNow(),
  },
  (t) => [
    // The natural key is the primary key: a surrogate id was never read and cost one more index
    // insert per span (docs/performance.md).
    primaryKey({ name: "spans_pkey", columns: [t.traceServiceId, t.spanId, t.tenantId] }),
    tenantForeignKey("spans_trace_pk_traces_id_fk", { column: t.tracePk, tenantId: t.tenantId }, traces),
    index("spans_trace_idx").on(t.tracePk, t.startTime),
    index("spans_session_idx").on(t.sessionPk, t.startTime),
  ],
);

/**
 * Where a span id of a trace written between migrations 0017 and 0022 lives (newer traces keep
 * their ids in `traces.span_keys`), for the bare-id lookup (migration 0017): the id's 16 hex characters as a
 * signed 64-bit integer (shared/spans.ts `spanIdKey`), and its trace. Written with the trace,
 * never updated; the span itself is derived from the trace's payload.
 */
export const spanIds = pgTable(
  "span_ids",
  {
    tenantId: denormalized("tenant_id"),
    traceServiceId: denormalized("trace_service_id"),
    spanId: bigint("span_id", { mode: "bigint" }).notNull(),
    tracePk: uuid("trace_pk")
      .notNull()
      .references(() => traces.id, { onDelete: "cascade" }),
  },
  (t) => [
    primaryKey({ name: "span_ids_pkey", columns: [t.traceServiceId, t.spanId, t.tenantId] }),
    index("span_ids_trace_idx").on(t.tracePk),
  ],
);

/** Application events from /raw/events. `eventKey` is the ingest message id (dedupe). */
export const events = pgTable(
  "events",
  {
    id: uuid("id").notNull().default(timeOrderedId),
    tenantId: denormalized("tenant_id"),
    traceServiceId: denormalized("trace_service_id"),
    sessionPk: uuid("session_pk").notNull(),
    sessionId: text("session_id").notNull(),
    traceId: text("trace_id"),
    eventKey: text("event_key").notNull(),
    name: text("name").notNull(),
    timestamp: ts("timestamp").notNull(),
    severityNumber: integer("severity_number"),
    attributes: jsonb("attributes").$type<Record<string, unknown>>().notNull().default({}),
    body: jsonb("body").$type<Record<string, unknown>>(),
    environment: text("environment"),
    ingestedAt: ts("ingested_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "events_pkey", columns: [t.id, t.tenantId] }),
    tenantForeignKey("events_session_pk_sessions_id_fk", { column: t.sessionPk, tenantId: t.tenantId }, sessions),
    uniqueIndex("events_service_key_uq").on(t.traceServiceId, t.eventKey, t.tenantId),
    index("events_session_idx").on(t.sessionPk, t.timestamp),
    index("events_trace_idx").on(t.traceServiceId, t.traceId),
  ],
);
