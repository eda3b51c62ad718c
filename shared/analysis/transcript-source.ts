import { canonicalJson } from "@cellar/shared/crypto";
import type { TracePayload } from "@cellar/shared/payloads";
import { type DerivedSpan, deriveSpans } from "@cellar/shared/spans";

/**
 * Where a transcript item's content lives in its trace's stored payload (docs/analysis.md,
 * "Items as references"). Maturation stores the reference and what only it computes (ids,
 * order, time, links, flags); a read puts back the fields below from the payload, with the same
 * functions maturation used to build them, so the answer is the one a copy would give.
 *
 * The item's `spanAttributes` are left to the payload too when its span is one of that trace's
 * (every item but a tool result shown at an earlier trace's second call).
 *
 * `req:<j>`: message j of the request; `res:<i>`: the message of response i's first choice; either
 * with `:call:<k>`: the k-th tool call of that message (its arguments).
 */
export type TranscriptSource = string;

/** The item fields a read takes from the payload (all other fields are stored with the item). */
export const SOURCED_FIELDS = ["content", "finishReason", "model", "usage", "reasoning", "refusal"] as const;

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
      arguments:
        typeof c?.function?.arguments === "string"
          ? c.function.arguments
          : canonicalJson(c?.function?.arguments ?? null),
    }));
  }
  if (message.function_call) {
    const f = message.function_call;
    return [
      {
        id: null,
        name: typeof f.name === "string" ? f.name : null,
        arguments: typeof f.arguments === "string" ? f.arguments : canonicalJson(f.arguments ?? null),
      },
    ];
  }
  return [];
}

function reasoningOf(message: any): string | null {
  for (const key of ["reasoning", "reasoning_content"]) {
    const v = message?.[key];
    if (typeof v === "string" && v) return v;
    if (v && typeof v === "object") return canonicalJson(v);
  }
  return null;
}

/** What an assistant item takes from the response that produced it (but `latencyMs`: maturation's). */
export function responseFields(response: any) {
  const choice = response?.choices?.[0];
  const message = choice?.message;
  return {
    finishReason: choice?.finish_reason ?? null,
    model: typeof response?.model === "string" ? response.model : null,
    usage: response?.usage ?? null,
    reasoning: reasoningOf(message),
    refusal: typeof message?.refusal === "string" && message.refusal ? message.refusal : null,
  };
}

export const requestSource = (j: number): TranscriptSource => `req:${j}`;
export const responseSource = (i: number): TranscriptSource => `res:${i}`;
export const callSource = (message: TranscriptSource, k: number): TranscriptSource => `${message}:call:${k}`;

const SOURCE = /^(req|res):(\d{1,9})(?::call:(\d{1,9}))?$/;

/** The message a source points at (`undefined` when the payload holds none there). */
export function messageAt(payload: any, source: TranscriptSource): any {
  const m = SOURCE.exec(source);
  if (!m) return undefined;
  const index = Number(m[2]);
  return m[1] === "req" ? payload?.request?.messages?.[index] : payload?.responses?.[index]?.choices?.[0]?.message;
}

/**
 * The parts of `payload` that these sources read, in the payload's shape (messages and responses
 * at their indexes, nothing else): sourcedFields gives on it what it gives on the whole payload
 * for each of them. A read keeps these instead of a whole payload (platform payload-cache.ts).
 */
export function sourcedParts(payload: any, sources: Iterable<TranscriptSource>): Record<string, any> {
  const messages: Record<number, unknown> = {};
  const responses: Record<number, unknown> = {};
  for (const source of sources) {
    const m = SOURCE.exec(source);
    if (!m) continue;
    const index = Number(m[2]);
    if (m[1] === "req") messages[index] = payload?.request?.messages?.[index];
    else responses[index] = payload?.responses?.[index];
  }
  return { request: { messages }, responses };
}

/**
 * The sourced fields of an item (type `type`) whose content is at `source` in `payload`. An
 * unknown source or a payload that no longer holds it gives `content: null`.
 */
export function sourcedFields(payload: any, source: TranscriptSource, type: string): Record<string, unknown> {
  const m = SOURCE.exec(source);
  if (!m) return { content: null };
  const message = messageAt(payload, source);
  if (m[3] !== undefined) return { content: toolCallsOf(message)[Number(m[3])]?.arguments ?? null };
  const content = message?.content ?? null;
  return m[1] === "res" && type === "assistant"
    ? { content, ...responseFields(payload?.responses?.[Number(m[2])]) }
    : { content };
}

/** Item fields stored as columns of `transcript_items` (and not again in its `item`). */
const COLUMN_FIELDS: ReadonlySet<string> = new Set(["id", "type", "role", "timestamp", "traceId", "spanId"]);
const SOURCED: ReadonlySet<string> = new Set(SOURCED_FIELDS);

/**
 * An item as `transcript_items.item` stores it: no column fields; when it references the payload
 * of trace `source.traceId`, no sourced fields, and no span attributes if its span is that trace's.
 * The kept keys in the item's order (what a copy less the deleted keys held), built without
 * `delete`, which turned the copy into a slow dictionary object before its JSON.stringify.
 */
export function storedItem(item: Record<string, unknown>, source?: { traceId: string }): Record<string, unknown> {
  const dropAttributes = source !== undefined && item.traceId === source.traceId;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(item)) {
    if (COLUMN_FIELDS.has(key)) continue;
    if (source && (SOURCED.has(key) || (dropAttributes && key === "spanAttributes"))) continue;
    out[key] = item[key];
  }
  return out;
}

const derived = new WeakMap<object, DerivedSpan[]>();

/** Attributes of span `spanId` as the trace's payload derives them (`{}` when none), as maturation set them. */
function spanAttributes(traceId: string | null, spanId: string | null, payload: unknown): Record<string, unknown> {
  if (!spanId || !traceId || !payload || typeof payload !== "object") return {};
  let spans = derived.get(payload);
  if (!spans) {
    try {
      spans = deriveSpans(traceId, payload as TracePayload);
    } catch {
      spans = [];
    }
    derived.set(payload, spans);
  }
  return spans.find((s) => s.spanId === spanId)?.attributes ?? {};
}

/** A `transcript_items` row as a read sees it. */
export interface StoredItemRow {
  item_id: string;
  kind: string;
  role: string | null;
  timestamp: Date | string;
  trace_id: string | null;
  span_id: string | null;
  item: Record<string, unknown>;
  source: string | null;
}

/**
 * The full item of a row. Rows written before migration 0018 hold the whole item (their `item`
 * has an `id`); later rows get their column fields back, and their sourced fields from `payload`
 * (the decoded payload of `source_trace_pk`; undefined when retention removed it). `lean` reads
 * drop span attributes (platform LEAN_ITEM): they are not derived for them.
 */
export function itemFromRow(row: StoredItemRow, payload?: unknown, lean = false): Record<string, unknown> {
  if ("id" in row.item) return row.item;
  return {
    id: row.item_id,
    type: row.kind,
    role: row.role,
    timestamp: new Date(row.timestamp).toISOString(),
    traceId: row.trace_id,
    spanId: row.span_id,
    ...(row.source && !lean && !("spanAttributes" in row.item)
      ? { spanAttributes: spanAttributes(row.trace_id, row.span_id, payload) }
      : {}),
    ...row.item,
    ...(row.source ? sourcedFields(payload, row.source, row.kind) : {}),
  };
}
