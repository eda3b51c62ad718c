import { fnv1a64 } from "@cellar/shared/analysis/fnv";
import type { OtlpTracePayload, TracePayload } from "@cellar/shared/payloads";

export interface DerivedSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  startTime: Date;
  endTime: Date;
  attributes: Record<string, unknown>;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
/** 8 hex digits of a 32-bit value (a table: `toString(16).padStart` was a tenth of the analysis). */
export const hex8 = (n: number) => HEX[n >>> 24] + HEX[(n >>> 16) & 255] + HEX[(n >>> 8) & 255] + HEX[n & 255];

/**
 * A stable hex id from parts (FNV-1a 64-bit x2): replays derive the same ids. The 64-bit
 * multiply by the FNV prime (2^40 + 0x1b3) is done on 32-bit halves: the same result as BigInt
 * arithmetic, an order of magnitude faster (this runs for every span and transcript item).
 */
export function stableId(...parts: string[]): string {
  const text = parts.join("\u0000");
  let lo1 = 0x84222325,
    hi1 = 0xcbf29ce4; // 0xcbf29ce484222325
  let lo2 = 0xcbf29ce4,
    hi2 = 0x84222325; // 0x84222325cbf29ce4
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    lo1 = (lo1 ^ c) >>> 0;
    let m = lo1 * 0x1b3;
    hi1 = (hi1 * 0x1b3 + Math.floor(m / 4294967296) + (lo1 << 8)) >>> 0;
    lo1 = m >>> 0;
    // (lo2 ^ (c + 31)) only touches the low half: c + 31 < 2^32.
    lo2 = (lo2 ^ (c + 31)) >>> 0;
    m = lo2 * 0x1b3;
    hi2 = (hi2 * 0x1b3 + Math.floor(m / 4294967296) + (lo2 << 8)) >>> 0;
    lo2 = m >>> 0;
  }
  return hex8(hi1) + hex8(lo1) + hex8(hi2) + hex8(lo2);
}

/**
 * `stableId(...parts).slice(0, 16)` (span ids, item ids, finding fingerprints): the first of
 * its two hashes only, half the work, by shared/analysis/fnv.ts's integer-only loop (the same
 * values: fnv.test.ts checks them against stableId's first hash).
 */
export function stableId16(...parts: string[]): string {
  const [hi, lo] = fnv1a64(parts.join("\u0000"));
  return hex8(hi) + hex8(lo);
}

/** Trace id: the payload's own `trace_id` when it carries one, else derived from the message id. */
export function traceIdFor(payload: TracePayload | OtlpTracePayload, messageId: string): string {
  const given = (payload as Record<string, unknown>).trace_id;
  return typeof given === "string" && given.length > 0 && given.length <= 256 ? given : messageId.slice(0, 32);
}

/**
 * One root span for the call and one `llm` span per response. With two responses the call
 * window is split evenly (the payload carries one start and one end time). Attribute names follow
 * the current OpenTelemetry GenAI conventions (docs/otlp.md); a call that came in over OTLP also
 * keeps its own span's attributes and ids (`otel.*`).
 */
export function deriveSpans(traceId: string, payload: TracePayload | OtlpTracePayload): DerivedSpan[] {
  const start = new Date(payload.start_time);
  const end = new Date(payload.end_time);
  const rootId = stableId16(traceId, "root");
  const otel = (payload as OtlpTracePayload).otel as
    | {
        trace_id: string;
        span_id: string;
        parent_span_id: string | null;
        name: string;
        operation: string;
        attributes: Record<string, unknown>;
      }
    | undefined;
  const common = {
    "gen_ai.provider.name": payload.provider,
    "gen_ai.operation.name": otel?.operation ?? "chat",
    "gen_ai.request.model": payload.request.model,
    "gen_ai.conversation.id": payload.session_id,
  };
  const spans: DerivedSpan[] = [
    {
      spanId: rootId,
      parentSpanId: null,
      name: `${payload.provider}.call`,
      kind: "trace",
      startTime: start,
      endTime: end,
      attributes: otel
        ? {
            ...common,
            "otel.trace_id": otel.trace_id,
            "otel.span_id": otel.span_id,
            "otel.parent_span_id": otel.parent_span_id,
          }
        : common,
    },
  ];
  const n = payload.responses.length;
  const step = (end.getTime() - start.getTime()) / n;
  payload.responses.forEach((response, i) => {
    const usage = response.usage as Record<string, any>;
    const attributes: Record<string, unknown> = {
      ...(otel?.attributes ?? {}),
      ...common,
      "gen_ai.response.model": response.model,
      "gen_ai.response.id": response.id,
      "gen_ai.response.finish_reasons": response.choices
        .map((c) => c.finish_reason)
        .filter((r): r is string => typeof r === "string"),
      "gen_ai.usage.input_tokens": usage.prompt_tokens,
      "gen_ai.usage.output_tokens": usage.completion_tokens,
      "response.index": i,
    };
    const cacheRead = usage.prompt_tokens_details?.cached_tokens;
    if (typeof cacheRead === "number") attributes["gen_ai.usage.cache_read.input_tokens"] = cacheRead;
    const cacheWrite = usage.prompt_tokens_details?.cache_creation_tokens;
    if (typeof cacheWrite === "number") attributes["gen_ai.usage.cache_creation.input_tokens"] = cacheWrite;
    const reasoning = usage.completion_tokens_details?.reasoning_tokens;
    if (typeof reasoning === "number") attributes["gen_ai.usage.reasoning.output_tokens"] = reasoning;
    spans.push({
      spanId: stableId16(traceId, "response", String(i)),
      parentSpanId: rootId,
      name: otel?.name ?? `chat ${payload.request.model}`,
      kind: "llm",
      startTime: new Date(start.getTime() + step * i),
      endTime: new Date(start.getTime() + step * (i + 1)),
      attributes,
    });
  });
  return spans;
}

/**
 * A span id as the `span_ids` table keys it: its 16 hex characters as a signed 64-bit integer
 * (decimal text), half the bytes of the text in the index. Null for anything not 16 lowercase hex
 * characters, which no derived span id is.
 */
export function spanIdKey(spanId: string): string | null {
  if (!/^[0-9a-f]{16}$/.test(spanId)) return null;
  return BigInt.asIntN(64, BigInt(`0x${spanId}`)).toString();
}
