import { Type, type Static } from "@sinclair/typebox";
import { registerSchemaFormats } from "./schema-formats.ts";
import { INSTANT_FORMAT } from "./timestamps.ts";

// The formats these schemas name are registered by their owner, whatever else this process loads.
registerSchemaFormats();

/** A client timestamp: parsed and normalised to UTC by shared/timestamps.ts (not `date-time`: Elysia owns that name). */
const Instant = Type.String({ format: INSTANT_FORMAT, maxLength: 64 });

/** Maximum lengths (UTF-16 code units) of identifier fields; documented in docs/ingestion.md. */
export const LIMITS = {
  serviceName: 200,
  sessionId: 512,
  environment: 128,
  eventName: 256,
  model: 256,
  traceId: 256,
  /** Largest token count accepted in `usage` (fits a Postgres int). */
  tokens: 2_147_483_647,
} as const;

/**
 * Not blank, no control characters (newlines, NUL in identifiers are always a client bug). The
 * three classes are disjoint in sequence, so the regex runs in linear time on hostile input.
 */
export const IDENTIFIER_PATTERN =
  "^[^\\S\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$";
const NonEmpty = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: IDENTIFIER_PATTERN });
const TokenCount = Type.Integer({ minimum: 0, maximum: LIMITS.tokens });

/** OpenAI message content: a string, an array of content parts, or null (assistant tool calls). */
const MessageContent = Type.Union([
  Type.String(),
  Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
  Type.Null(),
]);

export const ChatMessage = Type.Object(
  { role: Type.String({ minLength: 1, maxLength: 64 }), content: Type.Optional(MessageContent) },
  { additionalProperties: true },
);

export const ProviderRequest = Type.Object(
  { model: NonEmpty(LIMITS.model), messages: Type.Array(ChatMessage, { minItems: 1, maxItems: 100_000 }) },
  { additionalProperties: true },
);

export const ProviderResponse = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 512 }),
    object: Type.String({ minLength: 1, maxLength: 128 }),
    model: NonEmpty(LIMITS.model),
    choices: Type.Array(
      Type.Object(
        {
          index: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
          message: ChatMessage,
          finish_reason: Type.Union([Type.String({ maxLength: 128 }), Type.Null()]),
        },
        { additionalProperties: true },
      ),
      { maxItems: 128 },
    ),
    usage: Type.Object(
      {
        prompt_tokens: TokenCount,
        completion_tokens: TokenCount,
        total_tokens: TokenCount,
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

/** POST /raw/traces. Unknown fields are kept: SDKs send more, and the analysis reads it. */
export const TracePayload = Type.Object(
  {
    provider: Type.Literal("openai"),
    service_name: Type.Optional(NonEmpty(LIMITS.serviceName)),
    session_id: NonEmpty(LIMITS.sessionId),
    request: ProviderRequest,
    responses: Type.Array(ProviderResponse, { minItems: 1, maxItems: 2 }),
    environment: Type.Optional(NonEmpty(LIMITS.environment)),
    start_time: Instant,
    end_time: Instant,
  },
  { additionalProperties: true },
);
export type TracePayload = Static<typeof TracePayload>;

/**
 * A model call that came in over OTLP (shared/otlp/map.ts, docs/otlp.md): the trace shape above
 * with any provider, and messages that may be empty (they can follow as log records).
 */
export const OtlpTracePayload = Type.Object(
  {
    provider: NonEmpty(64),
    service_name: Type.Optional(NonEmpty(LIMITS.serviceName)),
    session_id: NonEmpty(LIMITS.sessionId),
    trace_id: NonEmpty(LIMITS.traceId),
    request: Type.Object(
      { model: NonEmpty(LIMITS.model), messages: Type.Array(ChatMessage, { maxItems: 100_000 }) },
      { additionalProperties: true },
    ),
    responses: Type.Array(ProviderResponse, { minItems: 1, maxItems: 2 }),
    environment: Type.Optional(NonEmpty(LIMITS.environment)),
    start_time: Instant,
    end_time: Instant,
    otel: Type.Object({ span_id: Type.String() }, { additionalProperties: true }),
  },
  { additionalProperties: true },
);
export type OtlpTracePayload = Static<typeof OtlpTracePayload>;

/** POST /raw/events. name, service_name, session_id, timestamp make a minimal event. */
export const EventPayload = Type.Object(
  {
    name: NonEmpty(LIMITS.eventName),
    service_name: Type.Optional(NonEmpty(LIMITS.serviceName)),
    session_id: NonEmpty(LIMITS.sessionId),
    timestamp: Instant,
    severity_number: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 })),
    attributes: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    body: Type.Optional(Type.Object({}, { additionalProperties: true })),
    environment: Type.Optional(NonEmpty(LIMITS.environment)),
    trace_id: Type.Optional(NonEmpty(LIMITS.traceId)),
  },
  { additionalProperties: true },
);
export type EventPayload = Static<typeof EventPayload>;

export const SCORE_LIMITS = { name: 128, label: 128, comment: 2_000, idempotencyKey: 128 } as const;
export const ScoreSource = Type.Union([Type.Literal("api"), Type.Literal("end_user"), Type.Literal("reviewer")]);
const ScoreIdempotencyKey = NonEmpty(SCORE_LIMITS.idempotencyKey);

/**
 * A score of a session or a trace (docs/scores.md): exactly one of `session_id` / `trace_id`
 * (shared/ingest-rules.ts), a name, and a value that is a finite number, a boolean or a
 * category's label. Unknown fields are refused: a score is small and fully ours.
 */
export const ScorePayload = Type.Object(
  {
    service_name: Type.Optional(NonEmpty(LIMITS.serviceName)),
    session_id: Type.Optional(NonEmpty(LIMITS.sessionId)),
    trace_id: Type.Optional(NonEmpty(LIMITS.traceId)),
    name: NonEmpty(SCORE_LIMITS.name),
    value: Type.Union([Type.Number({ minimum: -1e15, maximum: 1e15 }), Type.Boolean(), NonEmpty(SCORE_LIMITS.label)]),
    comment: Type.Optional(Type.String({ maxLength: SCORE_LIMITS.comment })),
    source: Type.Optional(ScoreSource),
    idempotency_key: Type.Optional(ScoreIdempotencyKey),
    environment: Type.Optional(NonEmpty(LIMITS.environment)),
  },
  { additionalProperties: false },
);
export type ScorePayload = Static<typeof ScorePayload>;

const Uuid = Type.String({ pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$" });
const Envelope = {
  /** sha256 hex of tenant, kind, service and canonical body (apps/ingest/src/publish.ts). */
  messageId: Type.String({ minLength: 1, maxLength: 128, pattern: IDENTIFIER_PATTERN }),
  tenantId: Uuid,
  serviceName: NonEmpty(LIMITS.serviceName),
  receivedAt: Instant,
};

/**
 * What ingest publishes to INGEST. `serviceName` is resolved (payload or server DSN). The
 * processor decodes it with this schema plus shared/ingest-rules.ts, as ingest checked it.
 */
// A trace from /raw/traces, or a model call mapped from OTLP (any provider, shared/otlp/map.ts).
export const IngestTraceMessage = Type.Object({
  kind: Type.Literal("trace"),
  ...Envelope,
  payload: Type.Union([TracePayload, OtlpTracePayload]),
});
export const IngestEventMessage = Type.Object({ kind: Type.Literal("event"), ...Envelope, payload: EventPayload });
/** A score from POST /raw/scores; `payload.source` is resolved by ingest (docs/scores.md). */
export const IngestScoreMessage = Type.Object({
  kind: Type.Literal("score"),
  ...Envelope,
  payload: Type.Object(
    { ...ScorePayload.properties, source: ScoreSource, idempotency_key: ScoreIdempotencyKey },
    { additionalProperties: false },
  ),
});
export type IngestScoreMessage = Static<typeof IngestScoreMessage>;
export const IngestMessage = Type.Union([IngestTraceMessage, IngestEventMessage, IngestScoreMessage]);
export type IngestMessage = Static<typeof IngestMessage>;

/**
 * One item of an INGEST batch message: an IngestMessage without the batch's tenant and
 * receivedAt. Its kind and body are checked as the IngestMessage it expands to
 * (shared/ingest-batch.ts), so a bad item is set aside alone.
 */
export const IngestBatchItem = Type.Object({
  kind: Type.String(),
  serviceName: Type.String(),
  messageId: Type.String(),
  payload: Type.Unknown(),
});
export type IngestBatchItem = Static<typeof IngestBatchItem>;
/**
 * What ingest publishes for one `/raw/batch` request (issue 36): its accepted items in one
 * message (several when they pass the stream's maximum payload), one tenant, one receivedAt.
 * `messageId` hashes the items' ids (apps/ingest/src/publish.ts), so a retried request is stored
 * once; the items' natural keys make any other copy a no-op in the processor.
 */
export const IngestBatchMessage = Type.Object(
  {
    kind: Type.Literal("batch"),
    messageId: Envelope.messageId,
    tenantId: Uuid,
    receivedAt: Instant,
    items: Type.Array(IngestBatchItem, { minItems: 1 }),
  },
  { additionalProperties: false },
);
export type IngestBatchMessage = Static<typeof IngestBatchMessage> & {
  /** Set by the INGEST codec: the items that fail their kind's rules (the processor dead-letters each alone). */
  rejected?: Array<{ index: number; error: string }>;
};
/** A message of the INGEST stream: one item (single doors, OTLP, and every message before batches) or a batch. */
export type IngestStreamMessage = IngestMessage | IngestBatchMessage;

export const MATURED_EVENT_TYPES = ["session.matured", "trace.matured"] as const;

/** What the dispatcher publishes to DELIVERIES: a pointer to the delivery row. */
export const DeliveryJob = Type.Object({
  deliveryId: Type.String({ minLength: 1 }),
  /** The delivery's tenant: picks the DELIVERIES lane (absent on jobs published before lanes). */
  tenantId: Type.Optional(Type.String({ minLength: 1 })),
  /** Test sends and manual re-sends: one attempt, no retry curve. */
  manual: Type.Optional(Type.Boolean()),
});
export type DeliveryJob = Static<typeof DeliveryJob>;

/** What the processor publishes to MATURED after a maturation commits. */
export const MaturedMessage = Type.Object({
  type: Type.Union([Type.Literal("session.matured"), Type.Literal("trace.matured")]),
  tenantId: Type.String(),
  traceServiceId: Type.String(),
  serviceName: Type.String(),
  /** Row id of the session or trace (stable entity identity). */
  entityPk: Type.String(),
  sessionId: Type.Optional(Type.String()),
  traceId: Type.Optional(Type.String()),
  maturationCount: Type.Integer({ minimum: 1 }),
  occurredAt: Type.String(),
});
export type MaturedMessage = Static<typeof MaturedMessage>;

export const MONITOR_EVENT_TYPES = ["monitor.triggered", "monitor.resolved"] as const;

/**
 * What the processor publishes to MATURED (subject `matured.monitor.<lane>`) when a monitor's
 * state change notifies (docs/monitors.md); the dispatcher fans it out to the subscriptions that
 * opted into its type. `data` is the webhook body's `data`, snake_case as the contract's events.
 */
export const MonitorEventMessage = Type.Object({
  type: Type.Union([Type.Literal("monitor.triggered"), Type.Literal("monitor.resolved")]),
  tenantId: Type.String(),
  traceServiceId: Type.String(),
  monitorId: Type.String(),
  /** The state change's number in the monitor's history: the dedup key with monitorId. */
  seq: Type.Integer({ minimum: 1 }),
  occurredAt: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
});
export type MonitorEventMessage = Static<typeof MonitorEventMessage>;

/** The most maturations one MATURED message carries. */
export const MATURATIONS_PER_MESSAGE = 100;

/**
 * Maturations of one kind and one tenant published together. The processor publishes trace
 * maturations this way, one message per maturation chunk and tenant instead of one per trace: a
 * message per trace cost about 350 us of CPU per trace (its publish, the dispatcher's and the
 * monitors' consumes: docs/performance.md, "One MATURED message per chunk of traces"). Each item
 * is the single message it replaces, all of the batch's tenant and of one type (maturedCodec
 * checks both), so the batch takes the subject and lane a single one would; consumers handle the
 * items one by one, a batch of sessions as well as one of traces.
 */
export const MaturedBatch = Type.Object({
  type: Type.Literal("matured.batch"),
  tenantId: Type.String(),
  maturations: Type.Array(MaturedMessage, { minItems: 1, maxItems: MATURATIONS_PER_MESSAGE }),
});
export type MaturedBatch = Static<typeof MaturedBatch>;

/** Everything on MATURED: maturations (the contract's events) and monitor state changes. */
export const MaturedStreamMessage = Type.Union([MaturedMessage, MaturedBatch, MonitorEventMessage]);
export type MaturedStreamMessage = Static<typeof MaturedStreamMessage>;
export const isMonitorEvent = (m: MaturedStreamMessage): m is MonitorEventMessage =>
  m.type === "monitor.triggered" || m.type === "monitor.resolved";
/**
 * The maturations a MATURED message carries: a batch's, or itself for a single one (what
 * processors before the batch published); none for a monitor event.
 */
export const maturationsOf = (m: MaturedStreamMessage): MaturedMessage[] =>
  m.type === "matured.batch" ? m.maturations : isMonitorEvent(m) ? [] : [m];
/** The dedup key (and MATURED message id) of a monitor event. */
export const monitorEventKey = (m: Pick<MonitorEventMessage, "monitorId" | "seq">) => `monitor:${m.monitorId}:${m.seq}`;

/**
 * One maturation of one entity: the MATURED message id and the webhook dedup key. The count
 * alone is not unique (it restarts at 1 after 30 days); the maturation time is, and a replay of
 * the same maturation carries the same time (it comes from the committed row).
 */
export function maturationKey(m: Pick<MaturedMessage, "type" | "entityPk" | "maturationCount" | "occurredAt">): string {
  return `${m.type === "session.matured" ? "session" : "trace"}:${m.entityPk}:${m.maturationCount}:${Date.parse(m.occurredAt)}`;
}
