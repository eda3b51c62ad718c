import { canonicalJson } from "@cellar/shared/crypto";
import type { TracePayload } from "@cellar/shared/payloads";
import { deriveSpans, stableId } from "../ingest/spans";
import { alignMessages } from "./align";

export interface TraceInput {
  traceId: string;
  startTime: Date;
  endTime: Date;
  payload: Record<string, any>;
}
export interface EventInput {
  id: string;
  name: string;
  timestamp: Date;
  severityNumber: number | null;
  attributes: Record<string, unknown>;
  body: Record<string, unknown> | null;
  traceId: string | null;
}

export type ItemType = "system" | "user" | "assistant" | "tool_call" | "tool_result" | "event";

/** One transcript item as stored in `transcript_items.item` (shape documented in docs/analysis.md). */
export interface TranscriptItem {
  id: string;
  type: ItemType;
  role: string | null;
  timestamp: string;
  traceId: string | null;
  spanId: string | null;
  content: unknown;
  [extra: string]: unknown;
}

export interface TranscriptResult {
  items: TranscriptItem[];
  /** Per trace: names of tools whose results first appeared in that trace's request. */
  consumedToolsByTrace: Map<string, string[]>;
  /** Tool calls answered inside a 2-response trace (the payload carries no result message for them). */
  impliedAnswered: Set<string>;
}

interface Placed {
  item: TranscriptItem;
  ms: number;
  seq: number;
}

/**
 * Turns a session's traces and events into conversation items in chronological order. OpenAI
 * requests repeat the whole history on every call, so each request is aligned with the
 * conversation the model saw last (see align.ts): only messages that alignment cannot match are
 * new. A tool result that first shows up in a later request sits right after its tool call.
 */
export function buildTranscript(traces: TraceInput[], events: EventInput[]): TranscriptResult {
  const ordered = [...traces].sort((a, b) => a.startTime.getTime() - b.startTime.getTime() || a.traceId.localeCompare(b.traceId));
  const placed: Placed[] = [];
  let seq = 0;
  let conversation: string[] = [];
  const callsById = new Map<string, Placed>(); // tool_call_id -> its tool_call item
  const answered = new Set<string>(); // tool_call_ids whose result is shown
  const consumedToolsByTrace = new Map<string, string[]>();
  const impliedAnswered = new Set<string>();

  for (const t of ordered) {
    const spans = spanAttributesOf(t);
    const messages: any[] = Array.isArray(t.payload.request?.messages) ? t.payload.request.messages : [];
    const fingerprints = messages.map(messageFingerprint);
    const { fresh, rewritten } = alignMessages(conversation, fingerprints);
    const startMs = t.startTime.getTime();
    const consumed: string[] = [];
    for (const j of fresh) {
      const m = messages[j];
      const origin = `${t.traceId}:req:${j}`;
      const base = { traceId: t.traceId, spanId: spans.rootId, timestamp: t.startTime.toISOString(), spanAttributes: spans.root };
      if (m?.role === "tool" || m?.role === "function") {
        const callId = typeof m.tool_call_id === "string" ? m.tool_call_id : null;
        if (callId && answered.has(callId)) continue; // re-sent (maybe reworded) result of an answered call
        const call = callId ? callsById.get(callId) : undefined;
        const toolName = (call?.item.toolName as string | undefined) ?? (typeof m.name === "string" ? m.name : null);
        const item: TranscriptItem = { id: itemId(origin), type: "tool_result", role: m.role, content: m.content ?? null, toolCallId: callId, toolName, ...base };
        if (callId) answered.add(callId);
        // Already consumed by the 2nd response of the trace that made the call: history now.
        if (toolName && !(callId && impliedAnswered.has(callId))) consumed.push(toolName);
        // Next to its call when the call was shown earlier; else where the request put it.
        placed.push(call ? { item: { ...item, timestamp: call.item.timestamp }, ms: call.ms, seq: call.seq + 0.5 } : { item, ms: startMs, seq: seq++ });
        continue;
      }
      for (const item of messageItems(m, origin, base)) {
        if (rewritten && item.type !== "tool_call") item.edited = true;
        const p = { item, ms: startMs, seq: seq++ };
        placed.push(p);
        if (item.type === "tool_call" && typeof item.toolCallId === "string") callsById.set(item.toolCallId, p);
      }
    }
    conversation = fingerprints.slice();

    const responses: any[] = Array.isArray(t.payload.responses) ? t.payload.responses : [];
    const step = (t.endTime.getTime() - startMs) / Math.max(1, responses.length);
    responses.forEach((r, ri) => {
      const choice = r?.choices?.[0];
      const message = choice?.message;
      if (!message) return;
      const endMs = Math.round(startMs + step * (ri + 1));
      const span = spans.responses[ri];
      const base = { traceId: t.traceId, spanId: span?.id ?? null, timestamp: new Date(endMs).toISOString(), spanAttributes: span?.attributes ?? {} };
      const extra = {
        finishReason: choice?.finish_reason ?? null,
        model: typeof r?.model === "string" ? r.model : null,
        usage: r?.usage ?? null,
        latencyMs: Math.round(step),
        reasoning: reasoningOf(message),
        refusal: typeof message.refusal === "string" && message.refusal ? message.refusal : null,
      };
      for (const item of messageItems(message, `${t.traceId}:res:${ri}`, base, extra)) {
        const p = { item, ms: endMs, seq: seq++ };
        placed.push(p);
        if (item.type === "tool_call" && typeof item.toolCallId === "string") callsById.set(item.toolCallId, p);
      }
      // The 2nd response of a tool-call workflow consumed the 1st response's tool calls.
      if (ri > 0) {
        for (const call of toolCallsOf(responses[ri - 1]?.choices?.[0]?.message)) {
          if (call.id) impliedAnswered.add(call.id);
          if (call.name) consumed.push(call.name);
        }
      }
      conversation.push(messageFingerprint(message));
    });
    consumedToolsByTrace.set(t.traceId, consumed);
  }

  for (const e of events) {
    const item: TranscriptItem = {
      id: eventItemId(e.id),
      type: "event",
      role: null,
      timestamp: e.timestamp.toISOString(),
      traceId: e.traceId,
      spanId: null,
      name: e.name,
      severityNumber: e.severityNumber,
      content: { name: e.name, severityNumber: e.severityNumber, attributes: e.attributes, body: e.body },
    };
    placed.push({ item, ms: e.timestamp.getTime(), seq: seq++ });
  }
  placed.sort((a, b) => a.ms - b.ms || a.seq - b.seq);
  return { items: placed.map((p) => p.item), consumedToolsByTrace, impliedAnswered };
}

export interface ToolCallRef {
  id: string | null;
  name: string | null;
  arguments: string;
}

/** Tool calls of an assistant message, including the legacy single `function_call`. */
export function toolCallsOf(message: any): ToolCallRef[] {
  if (!message) return [];
  if (Array.isArray(message.tool_calls)) {
    return message.tool_calls.map((c: any) => ({
      id: typeof c?.id === "string" ? c.id : null,
      name: typeof c?.function?.name === "string" ? c.function.name : null,
      arguments: typeof c?.function?.arguments === "string" ? c.function.arguments : canonicalJson(c?.function?.arguments ?? null),
    }));
  }
  if (message.function_call) {
    const f = message.function_call;
    return [{ id: null, name: typeof f.name === "string" ? f.name : null, arguments: typeof f.arguments === "string" ? f.arguments : canonicalJson(f.arguments ?? null) }];
  }
  return [];
}

/** Text of a message's content (content-part arrays joined), for fingerprints, TL;DR and intents. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: any) => (typeof part?.text === "string" ? part.text : typeof part === "string" ? part : ""))
      .filter(Boolean)
      .join("\n");
  }
  return "";
}

/** Identity of a message for alignment: role, whitespace-normalized content, tool calls, call id. */
export function messageFingerprint(m: any): string {
  const content = Array.isArray(m?.content) ? m.content.map((p: any) => (typeof p?.text === "string" ? p.text : canonicalJson(p))).join("\n") : m?.content;
  const text = typeof content === "string" ? content.replace(/\s+/g, " ").trim() : content == null ? "" : canonicalJson(content);
  const role = m?.role === "developer" ? "system" : m?.role;
  const calls = toolCallsOf(m).map((c) => [c.id, c.name, c.arguments.replace(/\s+/g, "")]);
  return canonicalJson([role ?? null, text, calls, m?.tool_call_id ?? null]);
}

export function eventItemId(eventPk: string): string {
  return `evt_${stableId(eventPk).slice(0, 16)}`;
}

export function itemId(origin: string, ...more: string[]): string {
  return `itm_${stableId(origin, ...more).slice(0, 16)}`;
}

function reasoningOf(message: any): string | null {
  for (const key of ["reasoning", "reasoning_content"]) {
    const v = message?.[key];
    if (typeof v === "string" && v) return v;
    if (v && typeof v === "object") return canonicalJson(v);
  }
  return null;
}

function messageItems(m: any, origin: string, base: Record<string, unknown>, extra: Record<string, unknown> = {}): TranscriptItem[] {
  const role = typeof m?.role === "string" ? m.role : "unknown";
  const out: TranscriptItem[] = [];
  const type: ItemType = role === "system" || role === "developer" ? "system" : role === "assistant" ? "assistant" : "user";
  const calls = toolCallsOf(m);
  const hasContent = contentText(m?.content).trim() !== "" || (Array.isArray(m?.content) && m.content.length > 0);
  if (hasContent || calls.length === 0) {
    out.push({ id: itemId(origin), type, role, content: m?.content ?? null, ...(base as any), ...(type === "assistant" ? extra : {}) });
  }
  calls.forEach((call, i) => {
    out.push({ id: itemId(origin, "call", String(i)), type: "tool_call", role, content: call.arguments, toolName: call.name, toolCallId: call.id, ...(base as any) });
  });
  return out;
}

/** Span ids and raw attributes as the writer derived them (same function, so they always agree). */
function spanAttributesOf(t: TraceInput) {
  let derived: ReturnType<typeof deriveSpans> = [];
  try {
    derived = deriveSpans(t.traceId, t.payload as TracePayload);
  } catch {
    derived = [];
  }
  const root = derived.find((s) => s.parentSpanId === null);
  return {
    rootId: root?.spanId ?? null,
    root: root?.attributes ?? {},
    responses: derived.filter((s) => s.kind === "llm").map((s) => ({ id: s.spanId, attributes: s.attributes })),
  };
}
