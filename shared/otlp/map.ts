import { IDENTIFIER_PATTERN, LIMITS, type EventPayload } from "../payloads.ts";
import { runAtOnce, type Steps } from "../steps.ts";
import type { Attributes, OtlpLogRecord, OtlpSpan } from "./decode.ts";
import {
  CHOICE_EVENT,
  choiceFromEvent,
  choicesFromValue,
  fromOpenInference,
  fromOpenLlmetry,
  indexed,
  jsonValue,
  messageFromEvent,
  messagesFromValue,
  PER_MESSAGE_EVENTS,
  systemFromValue,
  type ChatMessage,
  type OutputChoice,
} from "./messages.ts";
import { normaliseUsage, providerName } from "./usage.ts";
import { usageDetails } from "./usage-details.ts";

/**
 * OTLP spans and log records -> the payloads /raw/* produces (docs/otlp.md has the table, attribute
 * by attribute). Pure: the ingest host calls it per request; what it cannot map it refuses with
 * a reason, which becomes the OTLP partial_success answer.
 */

/** A model call normalised to the stored trace shape (TracePayload with any provider). */
export interface MappedModelCall {
  provider: string;
  session_id: string;
  environment?: string;
  start_time: string;
  end_time: string;
  trace_id: string;
  request: { model: string; messages: ChatMessage[]; tools?: unknown[] };
  responses: Array<{
    id: string;
    object: string;
    model: string;
    choices: Array<{ index: number; message: ChatMessage; finish_reason: string | null }>;
    /** The span's stop reasons when it carried no output message (content capture off). */
    finish_reasons?: string[];
    usage: Record<string, unknown>;
  }>;
  /** Where it came from; `messages` says whether the span itself carried the conversation. */
  otel: {
    trace_id: string;
    span_id: string;
    parent_span_id: string | null;
    name: string;
    operation: string;
    status_code: number;
    status_message: string | null;
    scope: string | null;
    /** The instrumentation's version: with `scope`, what says how its token counts read (usage.ts). */
    scope_version: string | null;
    messages: "span" | "none";
    attributes: Attributes;
  };
}

export interface Mapped<P> {
  /** resource service.name (the ingest host reconciles it with the credential). */
  serviceName: string | null;
  payload: P;
}

export interface MapResult<P> {
  accepted: Array<Mapped<P>>;
  /** Items refused, with the first few reasons (for partial_success.error_message). */
  rejected: number;
  reasons: string[];
  /** Items accepted but not stored: spans with no GenAI meaning (HTTP, DB, ...). */
  ignored: number;
}

const MODEL_CALL_OPERATIONS = new Set(["chat", "text_completion", "generate_content", "completion", "responses"]);
const EVENT_OPERATIONS = new Set(["execute_tool", "invoke_agent", "create_agent"]);
/** Attributes that carry the conversation: moved into request/responses, not kept twice. */
const MESSAGE_KEYS =
  /^(gen_ai\.(input|output)\.messages|gen_ai\.system_instructions|gen_ai\.(prompt|completion)(\.\d+\..*)?|llm\.(input|output)_messages\..*|input\.value|output\.value)$/;
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const IDENT = new RegExp(IDENTIFIER_PATTERN);

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const first = (attrs: Attributes, ...keys: string[]): unknown => {
  for (const k of keys) if (attrs[k] !== undefined && attrs[k] !== null && attrs[k] !== "") return attrs[k];
  return undefined;
};

/** Unix nanoseconds (decimal text) -> ISO 8601 with milliseconds, or null when unset. */
export function isoFromNanos(n: string): string | null {
  if (!/^\d{1,20}$/.test(n) || n === "0") return null;
  const ms = Number(BigInt(n) / 1_000_000n);
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** What a span is to Cellar: a model call, a tool/agent step (an event), or nothing. */
export function operationOf(attrs: Attributes): string | null {
  const op = str(attrs["gen_ai.operation.name"])?.toLowerCase();
  if (op) return op;
  const traceloop = str(attrs["llm.request.type"]) ?? str(attrs["gen_ai.request.type"]);
  if (traceloop) return traceloop === "completion" ? "text_completion" : traceloop;
  const oi = str(attrs["openinference.span.kind"])?.toUpperCase();
  if (oi === "LLM") return "chat";
  if (oi === "TOOL") return "execute_tool";
  if (oi === "AGENT") return "invoke_agent";
  if (
    first(attrs, "gen_ai.request.model", "gen_ai.response.model") !== undefined &&
    first(attrs, "gen_ai.provider.name", "gen_ai.system") !== undefined
  )
    return "chat";
  return null;
}

function identifier(value: string, max: number, field: string): string {
  if (value.length > max || !IDENT.test(value))
    throw new MappingError(
      `${field} must be a non-blank string of at most ${max} characters without control characters`,
    );
  return value;
}

class MappingError extends Error {}

/** session id: gen_ai.conversation.id, else session.id, else the OTLP trace id (docs/otlp.md). */
function sessionIdOf(attrs: Attributes): string | null {
  return str(first(attrs, "gen_ai.conversation.id", "session.id", "traceloop.association.properties.session_id"));
}

function environmentOf(resource: Attributes, attrs: Attributes): string | undefined {
  const env =
    str(first(resource, "deployment.environment.name", "deployment.environment")) ??
    str(first(attrs, "deployment.environment.name", "deployment.environment"));
  return env ? identifier(env, LIMITS.environment, "deployment.environment.name") : undefined;
}

export type SpanMapResult = MapResult<MappedModelCall | EventPayload> & { traces: number };

export function mapSpans(spans: OtlpSpan[]): SpanMapResult {
  return runAtOnce(mapSpansInSteps(spans));
}

/** `mapSpans` one step per span, for an ingest host to run in slices (shared/steps.ts). */
export function* mapSpansInSteps(spans: OtlpSpan[]): Steps<SpanMapResult> {
  const result: SpanMapResult = {
    accepted: [],
    rejected: 0,
    reasons: [],
    ignored: 0,
    traces: 0,
  };
  // A conversation id set on any span of a trace (often the agent or workflow span) applies to
  // the trace's other spans that carry none: they are one conversation.
  const sessionOfTrace = new Map<string, string>();
  for (const s of spans) {
    const sid = sessionIdOf(s.attributes);
    if (sid && !sessionOfTrace.has(s.traceId)) sessionOfTrace.set(s.traceId, sid);
  }
  for (const span of spans) {
    yield;
    const op = operationOf(span.attributes);
    if (!op || (!MODEL_CALL_OPERATIONS.has(op) && !EVENT_OPERATIONS.has(op))) {
      result.ignored++;
      continue;
    }
    try {
      if (!HEX32.test(span.traceId) || /^0+$/.test(span.traceId))
        throw new MappingError("trace_id must be 16 bytes, not all zero");
      if (!HEX16.test(span.spanId) || /^0+$/.test(span.spanId))
        throw new MappingError("span_id must be 8 bytes, not all zero");
      const start = isoFromNanos(span.startTimeUnixNano);
      const end = isoFromNanos(span.endTimeUnixNano) ?? start;
      if (!start || !end) throw new MappingError("start_time_unix_nano is required");
      if (Date.parse(end) < Date.parse(start))
        throw new MappingError("end_time_unix_nano is before start_time_unix_nano");
      const sessionId = identifier(
        sessionIdOf(span.attributes) ?? sessionOfTrace.get(span.traceId) ?? span.traceId,
        LIMITS.sessionId,
        "session id (gen_ai.conversation.id / session.id)",
      );
      const environment = environmentOf(span.resource, span.attributes);
      const serviceName = str(span.resource["service.name"]);
      if (MODEL_CALL_OPERATIONS.has(op)) {
        result.accepted.push({ serviceName, payload: modelCall(span, op, sessionId, environment, start, end) });
        result.traces++;
      } else {
        result.accepted.push({ serviceName, payload: stepEvent(span, op, sessionId, environment, start, end) });
      }
    } catch (err) {
      if (!(err instanceof MappingError)) throw err;
      result.rejected++;
      if (result.reasons.length < 5) result.reasons.push(`span ${span.spanId || "?"}: ${err.message}`);
    }
  }
  return result;
}

function modelCall(
  span: OtlpSpan,
  op: string,
  sessionId: string,
  environment: string | undefined,
  start: string,
  end: string,
): MappedModelCall {
  const a = span.attributes;
  const requestModel = str(first(a, "gen_ai.request.model", "llm.model_name", "gen_ai.response.model"));
  const responseModel = str(first(a, "gen_ai.response.model", "llm.model_name")) ?? requestModel;
  if (!requestModel) throw new MappingError("gen_ai.request.model is required on a model-call span");
  identifier(requestModel, LIMITS.model, "gen_ai.request.model");
  identifier(responseModel!, LIMITS.model, "gen_ai.response.model");
  const provider = providerName(
    first(a, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"),
    requestModel,
  );
  const { messages, choices } = conversationOf(span);
  const finishReasons = jsonValue(
    // The conventions; OpenLLMetry's older spelling; OpenInference (llm.finish_reason, and
    // llm.stop_reason from its Bedrock Converse instrumentation); the Vercel AI SDK.
    first(
      a,
      "gen_ai.response.finish_reasons",
      "gen_ai.response.finish_reason",
      "llm.response.finish_reason",
      "llm.finish_reason",
      "llm.stop_reason",
      "ai.response.finishReason",
    ),
  );
  const reasons: string[] = Array.isArray(finishReasons)
    ? finishReasons.map(String)
    : typeof finishReasons === "string"
      ? [finishReasons]
      : [];
  const usage = normaliseUsage(a, provider, requestModel, span.scope);
  const tier = usageDetails(a).serviceTier;
  const tools = jsonValue(first(a, "gen_ai.tool.definitions", "llm.tools"));
  const kept: Attributes = {};
  for (const k in a) if (!MESSAGE_KEYS.test(k)) kept[k] = a[k];
  return {
    provider,
    session_id: sessionId,
    ...(environment ? { environment } : {}),
    start_time: start,
    end_time: end,
    trace_id: `${span.traceId}-${span.spanId}`,
    request: { model: requestModel, messages, ...(Array.isArray(tools) ? { tools } : {}) },
    responses: [
      {
        id: str(a["gen_ai.response.id"]) ?? span.spanId,
        object: op === "text_completion" || op === "completion" ? "text_completion" : "chat.completion",
        model: responseModel!,
        choices: choices.map((c, i) => ({
          index: i,
          message: c.message,
          finish_reason: c.finishReason ?? reasons[i] ?? null,
        })),
        ...(choices.length === 0 && reasons.length ? { finish_reasons: reasons } : {}),
        // The tier the provider says served the call, where only the AI SDK's provider metadata says it (docs/pricing.md).
        ...(tier ? { service_tier: tier } : {}),
        usage,
      },
    ],
    otel: {
      trace_id: span.traceId,
      span_id: span.spanId,
      parent_span_id: span.parentSpanId,
      name: span.name,
      operation: op,
      status_code: span.status.code,
      status_message: span.status.message,
      scope: span.scope.name,
      scope_version: span.scope.version,
      messages: messages.length || choices.length ? "span" : "none",
      attributes: kept,
    },
  };
}

/** The conversation a span carries, from whichever convention its instrumentation follows. */
function conversationOf(span: OtlpSpan): { messages: ChatMessage[]; choices: OutputChoice[] } {
  const a = span.attributes;
  const details = span.events.find((e) => e.name === "gen_ai.client.inference.operation.details")?.attributes ?? {};
  const pick = (k: string) => a[k] ?? details[k];
  let messages: ChatMessage[] = [];
  let choices: OutputChoice[] = [];
  const system = systemFromValue(pick("gen_ai.system_instructions"));
  // Current conventions: JSON (or structured) messages on the span or its details event.
  if (pick("gen_ai.input.messages") !== undefined || pick("gen_ai.output.messages") !== undefined) {
    messages = messagesFromValue(pick("gen_ai.input.messages"));
    choices = choicesFromValue(pick("gen_ai.output.messages"));
  } else if (indexed(a, "gen_ai.prompt").length || indexed(a, "gen_ai.completion").length) {
    // OpenLLMetry: gen_ai.prompt.N.role / .content / .tool_calls.M.*; gen_ai.completion.N.*.
    messages = indexed(a, "gen_ai.prompt").map((g) => fromOpenLlmetry(g, "user"));
    choices = indexed(a, "gen_ai.completion").map((g) => ({
      message: { ...fromOpenLlmetry(g, "assistant"), role: "assistant" },
      finishReason: str(g.finish_reason),
    }));
  } else if (indexed(a, "llm.input_messages").length || indexed(a, "llm.output_messages").length) {
    // OpenInference (Phoenix): llm.input_messages.N.message.*.
    messages = indexed(a, "llm.input_messages").map((g) => fromOpenInference(g, "user"));
    choices = indexed(a, "llm.output_messages").map((g) => ({
      message: { ...fromOpenInference(g, "assistant"), role: "assistant" },
      finishReason: null,
    }));
  } else {
    // Older conventions on span events: gen_ai.content.prompt / .completion, or per-message events.
    for (const e of span.events) {
      if (e.name === "gen_ai.content.prompt") messages.push(...messagesFromValue(e.attributes["gen_ai.prompt"]));
      else if (e.name === "gen_ai.content.completion")
        choices.push(...choicesFromValue(e.attributes["gen_ai.completion"]));
      else if (PER_MESSAGE_EVENTS[e.name]) {
        const m = messageFromEvent(e.name, { ...e.attributes, tool_calls: jsonValue(e.attributes.tool_calls) });
        if (m) messages.push(m);
      } else if (e.name === CHOICE_EVENT) {
        const body = { ...e.attributes, message: jsonValue(e.attributes.message) };
        choices.push(choiceFromEvent(body));
      }
    }
  }
  if (system && !messages.some((m) => m.role === "system")) messages.unshift(system);
  return { messages, choices };
}

/** execute_tool / invoke_agent spans -> an event at the span's start, with its duration. */
function stepEvent(
  span: OtlpSpan,
  op: string,
  sessionId: string,
  environment: string | undefined,
  start: string,
  end: string,
): EventPayload {
  const attributes: Attributes = { ...span.attributes };
  for (const k of ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"])
    if (attributes[k] !== undefined) attributes[k] = jsonValue(attributes[k]);
  Object.assign(attributes, {
    "otel.trace_id": span.traceId,
    "otel.span_id": span.spanId,
    "otel.parent_span_id": span.parentSpanId,
    "otel.span_name": span.name,
    "otel.status_code": span.status.code,
    duration_ms: Date.parse(end) - Date.parse(start),
  });
  return {
    name: `gen_ai.${op}`,
    session_id: sessionId,
    timestamp: start,
    ...(span.status.code === 2 ? { severity_number: 17 } : {}),
    attributes,
    ...(environment ? { environment } : {}),
    trace_id: span.traceId,
  };
}

/** Log records -> events. A record tied to a span links to that span's model-call trace. */
export function mapLogs(records: OtlpLogRecord[]): MapResult<EventPayload> {
  return runAtOnce(mapLogsInSteps(records));
}

/** `mapLogs` one step per record (shared/steps.ts). */
export function* mapLogsInSteps(records: OtlpLogRecord[]): Steps<MapResult<EventPayload>> {
  const result: MapResult<EventPayload> = { accepted: [], rejected: 0, reasons: [], ignored: 0 };
  for (const [index, r] of records.entries()) {
    yield;
    try {
      const traceId = r.traceId && HEX32.test(r.traceId) && !/^0+$/.test(r.traceId) ? r.traceId : null;
      const spanId = r.spanId && HEX16.test(r.spanId) && !/^0+$/.test(r.spanId) ? r.spanId : null;
      const name = identifier(r.eventName ?? str(r.attributes["event.name"]) ?? "log", LIMITS.eventName, "event_name");
      const timestamp = isoFromNanos(r.timeUnixNano) ?? isoFromNanos(r.observedTimeUnixNano);
      if (!timestamp) throw new MappingError("time_unix_nano or observed_time_unix_nano is required");
      const session = sessionIdOf(r.attributes) ?? traceId;
      if (!session)
        throw new MappingError(
          "no session: set gen_ai.conversation.id or session.id, or emit the record inside a span",
        );
      const environment = environmentOf(r.resource, r.attributes);
      const attributes: Attributes = { ...r.attributes };
      if (traceId) attributes["otel.trace_id"] = traceId;
      if (spanId) attributes["otel.span_id"] = spanId;
      if (r.severityText) attributes["otel.severity_text"] = r.severityText;
      // Per-message events of one call share a millisecond: these keep their order (otlp/merge.ts).
      attributes["otel.time_unix_nano"] = r.timeUnixNano !== "0" ? r.timeUnixNano : r.observedTimeUnixNano;
      attributes["otel.record_index"] = index;
      const body =
        r.body === null || r.body === undefined
          ? undefined
          : typeof r.body === "object" && !Array.isArray(r.body)
            ? (r.body as Record<string, unknown>)
            : { value: r.body };
      result.accepted.push({
        serviceName: str(r.resource["service.name"]),
        payload: {
          name,
          session_id: identifier(session, LIMITS.sessionId, "session id (gen_ai.conversation.id / session.id)"),
          timestamp,
          ...(r.severityNumber >= 1 && r.severityNumber <= 24 ? { severity_number: r.severityNumber } : {}),
          attributes,
          ...(body ? { body } : {}),
          ...(environment ? { environment } : {}),
          ...(traceId ? { trace_id: spanId ? `${traceId}-${spanId}` : traceId } : {}),
        },
      });
    } catch (err) {
      if (!(err instanceof MappingError)) throw err;
      result.rejected++;
      if (result.reasons.length < 5) result.reasons.push(`log record: ${err.message}`);
    }
  }
  return result;
}
