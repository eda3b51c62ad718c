import {
  CHOICE_EVENT,
  choiceFromEvent,
  choicesFromValue,
  messageFromEvent,
  messagesFromValue,
  PER_MESSAGE_EVENTS,
  systemFromValue,
  type ChatMessage,
  type OutputChoice,
} from "@cellar/shared/otlp/messages";
import type { EventInput, TraceInput } from "../analysis/transcript.ts";

/**
 * Instrumentations that log messages as OTLP log records (the deprecated per-message events
 * gen_ai.user.message ... gen_ai.choice, e.g. @opentelemetry/instrumentation-openai, or a
 * gen_ai.client.inference.operation.details record) send the conversation apart from the span,
 * often in another request. Before analysis, each such model call gets its messages back from the
 * events tied to its span (event trace_id = the call's trace id), and those events leave the
 * event list: they are the conversation, not things that happened beside it.
 */
const DETAILS_EVENT = "gen_ai.client.inference.operation.details";

function isMessageEvent(name: string): boolean {
  return name in PER_MESSAGE_EVENTS || name === CHOICE_EVENT || name === DETAILS_EVENT;
}

function order(a: EventInput, b: EventInput): number {
  const na = BigInt(String(a.attributes["otel.time_unix_nano"] ?? "0"));
  const nb = BigInt(String(b.attributes["otel.time_unix_nano"] ?? "0"));
  if (na !== nb) return na < nb ? -1 : 1;
  return Number(a.attributes["otel.record_index"] ?? 0) - Number(b.attributes["otel.record_index"] ?? 0);
}

export function mergeOtelMessageEvents(
  traces: TraceInput[],
  events: EventInput[],
): { traces: TraceInput[]; events: EventInput[] } {
  const waiting = new Map<string, TraceInput>();
  for (const t of traces) if (t.payload?.otel?.messages === "none") waiting.set(t.traceId, t);
  if (waiting.size === 0) return { traces, events };
  const byTrace = new Map<string, EventInput[]>();
  const used = new Set<EventInput>();
  for (const e of events) {
    if (!e.traceId || !waiting.has(e.traceId) || !isMessageEvent(e.name)) continue;
    let list = byTrace.get(e.traceId);
    if (!list) byTrace.set(e.traceId, (list = []));
    list.push(e);
  }
  const merged = traces.map((t) => {
    const list = byTrace.get(t.traceId);
    if (!list) return t;
    list.sort(order);
    const messages: ChatMessage[] = [];
    const choices: Array<OutputChoice & { index: number }> = [];
    for (const e of list) {
      used.add(e);
      const body = e.body ?? {};
      if (e.name === CHOICE_EVENT) choices.push(choiceFromEvent(body));
      else if (e.name === DETAILS_EVENT) {
        const a = { ...e.attributes, ...body } as Record<string, unknown>;
        const system = systemFromValue(a["gen_ai.system_instructions"]);
        if (system) messages.push(system);
        messages.push(...messagesFromValue(a["gen_ai.input.messages"]));
        choicesFromValue(a["gen_ai.output.messages"]).forEach((c, i) => choices.push({ ...c, index: i }));
      } else {
        const m = messageFromEvent(e.name, body);
        if (m) messages.push(m);
      }
    }
    choices.sort((a, b) => a.index - b.index);
    const payload = structuredClone(t.payload);
    if (!payload.request.messages?.length) payload.request.messages = messages;
    const response = payload.responses?.[0];
    if (response && (!response.choices || response.choices.length === 0) && choices.length) {
      const reasons: unknown[] = Array.isArray(payload.otel?.attributes?.["gen_ai.response.finish_reasons"])
        ? payload.otel.attributes["gen_ai.response.finish_reasons"]
        : [];
      response.choices = choices.map((c, i) => ({
        index: i,
        message: c.message,
        finish_reason: c.finishReason ?? (reasons[i] as string | undefined) ?? null,
      }));
    }
    payload.otel = { ...payload.otel, messages: "events" };
    return { ...t, payload };
  });
  return { traces: merged, events: used.size ? events.filter((e) => !used.has(e)) : events };
}
