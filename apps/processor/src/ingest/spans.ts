import type { TracePayload } from "../../../../shared/payloads";

export interface DerivedSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  startTime: Date;
  endTime: Date;
  attributes: Record<string, unknown>;
}

/** A stable hex id from parts (FNV-1a 64-bit x2): replays derive the same ids. */
export function stableId(...parts: string[]): string {
  const text = parts.join("\u0000");
  let h1 = 0xcbf29ce484222325n;
  let h2 = 0x84222325cbf29ce4n;
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  for (let i = 0; i < text.length; i++) {
    const c = BigInt(text.charCodeAt(i));
    h1 = ((h1 ^ c) * prime) & mask;
    h2 = ((h2 ^ (c + 31n)) * prime) & mask;
  }
  return h1.toString(16).padStart(16, "0") + h2.toString(16).padStart(16, "0");
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
