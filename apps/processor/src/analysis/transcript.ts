import { canonicalJson } from "../../../../shared/crypto";
import { stableId } from "../ingest/spans";

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

export interface TranscriptItem {
  id: string;
  type: "system" | "user" | "assistant" | "tool_call" | "tool_result" | "event";
  role: string | null;
  timestamp: string;
  traceId: string | null;
  spanId: string | null;
  content: unknown;
  [extra: string]: unknown;
}

/**
 * Turns a session's traces and events into conversation items in chronological order.
 * OpenAI requests repeat the whole history on every call, so each call contributes only the
 * messages past the longest prefix it shares with the conversation shown so far.
 */
export function buildTranscript(traces: TraceInput[], events: EventInput[]): TranscriptItem[] {
  const ordered = [...traces].sort((a, b) => a.startTime.getTime() - b.startTime.getTime() || a.traceId.localeCompare(b.traceId));
  const items: TranscriptItem[] = [];
  let conversation: string[] = []; // fingerprints of messages shown, in order
  for (const t of ordered) {
    const messages: any[] = Array.isArray(t.payload.request?.messages) ? t.payload.request.messages : [];
    const fingerprints = messages.map(messageFingerprint);
    let shared = 0;
    while (shared < fingerprints.length && shared < conversation.length && fingerprints[shared] === conversation[shared]) shared++;
    const at = t.startTime.toISOString();
    messages.slice(shared).forEach((m, i) => items.push(...messageItems(m, t.traceId, null, at, `${t.traceId}:req:${shared + i}`)));
    conversation = fingerprints.slice();
    const responses: any[] = Array.isArray(t.payload.responses) ? t.payload.responses : [];
    responses.forEach((r, ri) => {
      const message = r?.choices?.[0]?.message;
      if (!message) return;
      const spanId = stableId(t.traceId, "response", String(ri)).slice(0, 16);
      items.push(...messageItems(message, t.traceId, spanId, t.endTime.toISOString(), `${t.traceId}:res:${ri}`, r?.choices?.[0]?.finish_reason ?? null));
      conversation.push(messageFingerprint(message));
    });
  }
  for (const e of events) {
    items.push({
      id: `evt_${stableId(e.id).slice(0, 16)}`,
      type: "event",
      role: null,
      timestamp: e.timestamp.toISOString(),
      traceId: e.traceId,
      spanId: null,
      content: { name: e.name, severityNumber: e.severityNumber, attributes: e.attributes, body: e.body },
    });
  }
  // Stable sort keeps conversation order among items with equal timestamps.
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => Date.parse(a.item.timestamp) - Date.parse(b.item.timestamp) || a.index - b.index)
    .map((x) => x.item);
}

function messageFingerprint(m: any): string {
  return canonicalJson({ role: m?.role, content: m?.content ?? null, tool_calls: m?.tool_calls ?? null, tool_call_id: m?.tool_call_id ?? null });
}

function messageItems(m: any, traceId: string, spanId: string | null, timestamp: string, origin: string, finishReason: string | null = null): TranscriptItem[] {
  const role = typeof m?.role === "string" ? m.role : "unknown";
  const out: TranscriptItem[] = [];
  const base = { traceId, spanId, timestamp };
  if (role === "tool") {
    out.push({ id: `itm_${stableId(origin).slice(0, 16)}`, type: "tool_result", role, content: m.content ?? null, toolCallId: m.tool_call_id ?? null, ...base });
    return out;
  }
  const type = role === "system" || role === "developer" ? "system" : role === "assistant" ? "assistant" : "user";
  const hasContent = m?.content !== null && m?.content !== undefined && m?.content !== "";
  if (hasContent || !Array.isArray(m?.tool_calls)) {
    out.push({ id: `itm_${stableId(origin).slice(0, 16)}`, type, role, content: m?.content ?? null, ...base, ...(finishReason ? { finishReason } : {}) });
  }
  if (Array.isArray(m?.tool_calls)) {
    m.tool_calls.forEach((call: any, i: number) => {
      out.push({
        id: `itm_${stableId(origin, "call", String(i)).slice(0, 16)}`,
        type: "tool_call",
        role,
        content: call?.function?.arguments ?? null,
        toolName: call?.function?.name ?? null,
        toolCallId: call?.id ?? null,
        ...base,
      });
    });
  }
  return out;
}
