import type { TracePayload } from "@cellar/shared/payloads";

export interface DerivedSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  startTime: Date;
  endTime: Date;
  attributes: Record<string, unknown>;
}

/**
 * A stable hex id from parts (FNV-1a 64-bit x2): replays derive the same ids. The 64-bit
 * multiply by the FNV prime (2^40 + 0x1b3) is done on 32-bit halves: the same result as BigInt
 * arithmetic, an order of magnitude faster (this runs for every span and transcript item).
 */
export function stableId(...parts: string[]): string {
  const text = parts.join("\u0000");
  let lo1 = 0x84222325, hi1 = 0xcbf29ce4; // 0xcbf29ce484222325
  let lo2 = 0xcbf29ce4, hi2 = 0x84222325; // 0x84222325cbf29ce4
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
  const hex = (n: number) => n.toString(16).padStart(8, "0");
  return hex(hi1) + hex(lo1) + hex(hi2) + hex(lo2);
}

/** Trace id: the payload's own `trace_id` when it carries one, else derived from the message id. */
export function traceIdFor(payload: TracePayload, messageId: string): string {
  const given = (payload as Record<string, unknown>).trace_id;
  return typeof given === "string" && given.length > 0 && given.length <= 256 ? given : messageId.slice(0, 32);
}

/**
 * One root span for the call and one `llm` span per response. With two responses the call
 * window is split evenly (the payload carries one start and one end time).
 */
export function deriveSpans(traceId: string, payload: TracePayload): DerivedSpan[] {
  const start = new Date(payload.start_time);
  const end = new Date(payload.end_time);
  const rootId = stableId(traceId, "root").slice(0, 16);
  const spans: DerivedSpan[] = [
    {
      spanId: rootId,
      parentSpanId: null,
      name: `${payload.provider}.call`,
      kind: "trace",
      startTime: start,
      endTime: end,
      attributes: { "gen_ai.system": payload.provider, "gen_ai.request.model": payload.request.model, "session.id": payload.session_id },
    },
  ];
  const n = payload.responses.length;
  const step = (end.getTime() - start.getTime()) / n;
  payload.responses.forEach((response, i) => {
    const choice = response.choices?.[0];
    spans.push({
      spanId: stableId(traceId, "response", String(i)).slice(0, 16),
      parentSpanId: rootId,
      name: "chat.completion",
      kind: "llm",
      startTime: new Date(start.getTime() + step * i),
      endTime: new Date(start.getTime() + step * (i + 1)),
      attributes: {
        "gen_ai.system": payload.provider,
        "gen_ai.request.model": payload.request.model,
        "gen_ai.response.model": response.model,
        "gen_ai.response.id": response.id,
        "gen_ai.response.finish_reason": choice?.finish_reason ?? null,
        "gen_ai.usage.prompt_tokens": response.usage.prompt_tokens,
        "gen_ai.usage.completion_tokens": response.usage.completion_tokens,
        "gen_ai.usage.total_tokens": response.usage.total_tokens,
        "response.index": i,
      },
    });
  });
  return spans;
}
