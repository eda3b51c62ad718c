import type { EventInput, TraceInput } from "./transcript.ts";

let counter = 0;
const T0 = Date.parse("2025-09-01T10:00:00Z");

/** A stored trace as the analysis reads it (payload as ingested). */
export function trace(opts: {
  at: number; // seconds after T0
  messages: any[];
  responses: Array<{ message?: any; finish?: string | null; usage?: Record<string, unknown>; model?: string }>;
  durationMs?: number;
  model?: string;
  tools?: any[];
  id?: string;
}): TraceInput {
  const start = new Date(T0 + opts.at * 1000);
  const traceId = opts.id ?? `tr${++counter}`;
  return {
    traceId,
    startTime: start,
    endTime: new Date(start.getTime() + (opts.durationMs ?? 1000)),
    payload: {
      provider: "openai",
      session_id: "s1",
      start_time: start.toISOString(),
      end_time: new Date(start.getTime() + (opts.durationMs ?? 1000)).toISOString(),
      request: {
        model: opts.model ?? "gpt-4o-mini",
        messages: opts.messages,
        ...(opts.tools ? { tools: opts.tools } : {}),
      },
      responses: opts.responses.map((r, i) => ({
        id: `chatcmpl-${traceId}-${i}`,
        object: "chat.completion",
        model: r.model ?? `${opts.model ?? "gpt-4o-mini"}-2024-07-18`,
        choices:
          r.message === undefined
            ? []
            : [{ index: 0, message: r.message, finish_reason: r.finish === undefined ? "stop" : r.finish }],
        usage: r.usage ?? { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      })),
    },
  };
}

export function event(opts: { at: number; name: string; severity?: number; id?: string }): EventInput {
  return {
    id: opts.id ?? `00000000-0000-0000-0000-${String(++counter).padStart(12, "0")}`,
    name: opts.name,
    timestamp: new Date(T0 + opts.at * 1000),
    severityNumber: opts.severity ?? null,
    attributes: {},
    body: null,
    traceId: null,
  };
}

export const sys = (content: string) => ({ role: "system", content });
export const user = (content: string) => ({ role: "user", content });
export const assistant = (content: string | null, toolCalls?: Array<{ id: string; name: string; args: unknown }>) => ({
  role: "assistant",
  content,
  ...(toolCalls
    ? {
        tool_calls: toolCalls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
      }
    : {}),
});
export const toolResult = (id: string, content: string) => ({ role: "tool", tool_call_id: id, content });
