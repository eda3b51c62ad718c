/**
 * The contract's ingestion payloads (Trace payload, Event payload), as the SDK sends them. The
 * ingest host validates the same shapes (shared/payloads.ts); test/sdk-types.test.ts checks the
 * two stay assignable both ways.
 */

export type Timestamp = string | Date;

export interface ChatMessage {
  role: string;
  /** A string, an array of content parts (objects with a string `type`), or null (assistant tool calls). */
  content?: string | Array<{ type: string; [k: string]: unknown }> | null;
  [k: string]: unknown;
}

export interface ProviderResponse {
  id: string;
  object: string;
  model: string;
  choices: Array<{ index: number; message: ChatMessage; finish_reason: string | null; [k: string]: unknown }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; [k: string]: unknown };
  [k: string]: unknown;
}

/** The trace payload's named fields (POST /raw/traces: one model call). */
export interface TraceFields {
  /** Currently only "openai" (the contract's chat shape; the wrappers map other providers into it). */
  provider: "openai";
  service_name?: string;
  session_id: string;
  request: { model: string; messages: ChatMessage[]; [k: string]: unknown };
  /** 1 to 2 entries. */
  responses: ProviderResponse[];
  environment?: string;
  start_time: string;
  end_time: string;
}
/** Unknown fields are kept by the ingest host. */
export type TracePayload = TraceFields & { [k: string]: unknown };

/** The event payload's named fields (POST /raw/events: an application event). */
export interface EventFields {
  name: string;
  service_name?: string;
  session_id: string;
  timestamp: string;
  severity_number?: number;
  attributes?: Record<string, unknown>;
  body?: Record<string, unknown>;
  environment?: string;
  trace_id?: string;
}
export type EventPayload = EventFields & { [k: string]: unknown };

/** What `trace()` takes: Dates allowed, `provider` (openai) and the service (the DSN's) optional. */
export type TraceInput = Omit<TraceFields, "provider" | "start_time" | "end_time"> & {
  provider?: "openai";
  start_time: Timestamp;
  end_time: Timestamp;
  [k: string]: unknown;
};

/** What `event()` takes: `timestamp` optional (now), Dates allowed. */
export type EventInput = Omit<EventFields, "timestamp"> & { timestamp?: Timestamp; [k: string]: unknown };

/** A batch door item type (docs/sdks.md). */
export type ItemType = "trace" | "event";
