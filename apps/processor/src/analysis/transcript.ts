import { canonicalJson } from "@cellar/shared/crypto";
import type { TracePayload } from "@cellar/shared/payloads";
import { stableId16 } from "@cellar/shared/spans";
import {
  callSource,
  requestSource,
  responseSource,
  sourcedFields,
  toolCallsOf,
  type TranscriptSource,
} from "@cellar/shared/analysis/transcript-source";
import { deriveSpans } from "../ingest/spans.ts";
import { alignMessages } from "./align.ts";
import { type ChainedRequest, Conversation, NeedsPayload } from "./chain.ts";

export interface TraceInput {
  traceId: string;
  startTime: Date;
  endTime: Date;
  payload: Record<string, any>;
  /** The stored trace row, when `payload` is as stored (not rebuilt from OTLP message events). */
  pk?: string;
  /**
   * Set when `payload` comes from the trace's digest (digest.ts): its request's history is known
   * by chain hashes only, and only the tail's messages are in `payload.request.messages`.
   */
  chained?: ChainedRequest;
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

/** Bounds of what a transcript keeps in memory and stores (docs/analysis.md, "Caps"). */
export interface TranscriptCaps {
  maxItems: number;
  /** Approximate JSON bytes of the kept items' content, reasoning and attributes. */
  maxBytes: number;
}
export const DEFAULT_TRANSCRIPT_CAPS: TranscriptCaps = { maxItems: 5_000, maxBytes: 32 * 1024 * 1024 };

/** What one trace added, for the call extraction that follows it. */
export interface TraceStep {
  /** Names of tools whose results this trace's first call consumed (new results in its request). */
  consumedTools: string[];
}

/** Where a kept item's content is in a stored payload (items with none hold their content). */
export interface ItemReference {
  tracePk: string;
  traceId: string;
  source: TranscriptSource;
}
const references = new WeakMap<TranscriptItem, ItemReference>();
/** The stored payload an item's sourced fields come from, if any (persist stores the reference). */
export const referenceOf = (item: TranscriptItem): ItemReference | undefined => references.get(item);

interface Placed {
  item: TranscriptItem;
  ms: number;
  seq: number;
}

/**
 * Builds a session's transcript incrementally: traces in start order (`addTrace`), events in any
 * order (`addEvent`), then `finish()`. Memory: the last conversation's fingerprints, the kept
 * items (capped by count and bytes), and one id per tool call. Rules (docs/analysis.md):
 * - Requests repeat the history: each request is aligned with the conversation the model saw
 *   last (align.ts); only unmatched messages are new.
 * - A tool call is one item per (tool_call_id, name), whichever message carried it first; the
 *   response that made it is preferred over a request that echoes it (2-response payloads whose
 *   request is the second call's request).
 * - Every message is timed by when it was first seen: request messages at the request's start,
 *   responses at their end, and a tool result at the start of the call that consumed it. For the
 *   calls of a 2-response trace's first response, that is the second call's start (estimated as
 *   the first response's end), whether the result is carried by this request or a later one.
 * - Ties keep conversation order (parallel tool calls: call, call, result, result).
 */
export class TranscriptBuilder {
  private placed: Placed[] = [];
  private seq = 0;
  private conversation = new Conversation();
  /** (tool_call_id, name) keys of the tool calls shown (kept past the cap: dedupe needs them). */
  private callKeys = new Set<string>();
  /** tool_call_id -> how many distinct calls used it before (0 = once). */
  private occurrences = new Map<string, number>();
  /** tool_call_id -> tool name, for results that carry no name. */
  private callNames = new Map<string, string | null>();
  private answered = new Set<string>();
  /** Calls answered inside a 2-response trace: call id -> when their result was consumed. */
  private impliedAt = new Map<
    string,
    { ms: number; traceId: string; spanId: string | null; spanAttributes: Record<string, unknown> }
  >();
  private bytes = 0;
  private dropped = 0;
  private lastStartMs = -Infinity;

  /** `onItem` sees every item, kept or past the caps (metrics and detectors cover the whole history). */
  constructor(
    private caps: TranscriptCaps = DEFAULT_TRANSCRIPT_CAPS,
    private onItem?: (item: TranscriptItem) => void,
  ) {}

  /** Approximate JSON bytes of the kept items (the caps' count). */
  get approxBytes(): number {
    return this.bytes;
  }

  /** Tool calls answered inside a 2-response trace (the payload need not carry their results). */
  get impliedAnswered(): ReadonlySet<string> {
    return new Set(this.impliedAt.keys());
  }
  /** Tool call ids whose result item was shown. */
  get answeredCalls(): ReadonlySet<string> {
    return this.answered;
  }

  addTrace(t: TraceInput): TraceStep {
    const startMs = t.startTime.getTime();
    if (startMs < this.lastStartMs) throw new Error("TranscriptBuilder: traces must come in start order");
    this.lastStartMs = startMs;
    const spans = spanAttributesOf(t);
    const messages: any[] = Array.isArray(t.payload.request?.messages) ? t.payload.request.messages : [];
    const responses: any[] = Array.isArray(t.payload.responses) ? t.payload.responses : [];
    const responseMessages = responses.map((r) => r?.choices?.[0]?.message).filter(Boolean);
    const step = (t.endTime.getTime() - startMs) / Math.max(1, responses.length);
    // Calls this trace's responses make: a request message echoing them is left to the response.
    const respondedKeys = new Set(
      responseMessages.flatMap((m) =>
        toolCallsOf(m)
          .filter((c) => c.id)
          .map((c) => callKey(c.id!, c.name, c.arguments)),
      ),
    );
    // Calls of the 1st response of a 2-response trace are answered before its 2nd call starts.
    if (responses.length > 1) {
      const at = {
        ms: Math.round(startMs + step),
        traceId: t.traceId,
        spanId: spans.responses[1]?.id ?? null,
        spanAttributes: spans.responses[1]?.attributes ?? {},
      };
      for (const c of toolCallsOf(responses[0]?.choices?.[0]?.message))
        if (c.id && !this.impliedAt.has(c.id)) this.impliedAt.set(c.id, at);
    }
    const echoed = new Set<string>();

    const { fresh, rewritten, fingerprintAt } = this.align(t, messages);
    const consumed: string[] = [];
    const base = {
      traceId: t.traceId,
      spanId: spans.rootId,
      timestamp: t.startTime.toISOString(),
      spanAttributes: spans.root,
    };
    const deferredResults: Array<{ item: TranscriptItem; ms: number }> = [];
    for (const j of fresh) {
      const m = messages[j];
      const origin = `${t.traceId}:req:${j}`;
      if (m?.role === "tool" || m?.role === "function") {
        const callId = typeof m.tool_call_id === "string" ? m.tool_call_id : null;
        if (callId && this.answered.has(callId)) continue; // re-sent (maybe reworded) result of an answered call
        const toolName =
          (callId ? this.callNames.get(callId) : undefined) ?? (typeof m.name === "string" ? m.name : null);
        const occurrence = callId ? (this.occurrences.get(callId) ?? 0) : 0;
        const id = callId
          ? occurrence > 0
            ? itemId("tool_result", callId, String(occurrence))
            : itemId("tool_result", callId)
          : itemId(origin);
        const item: TranscriptItem = {
          id,
          type: "tool_result",
          role: m.role,
          ...(sourcedFields(t.payload, requestSource(j), "tool_result") as { content: unknown }),
          toolCallId: callId,
          toolName,
          ...base,
        };
        if (t.pk) references.set(item, { tracePk: t.pk, traceId: t.traceId, source: requestSource(j) });
        if (callId) this.answered.add(callId);
        const implied = callId ? this.impliedAt.get(callId) : undefined;
        if (implied) {
          // Consumed by the 2nd call of the trace that made the call: shown there, whichever
          // request carries it (this one or a later one), so both conventions agree.
          Object.assign(item, {
            timestamp: new Date(implied.ms).toISOString(),
            traceId: implied.traceId,
            spanId: implied.spanId,
            spanAttributes: implied.spanAttributes,
          });
          if (respondedKeys.size && callId && this.isRespondedHere(callId, respondedKeys))
            deferredResults.push({ item, ms: implied.ms });
          else this.place(item, implied.ms);
          continue;
        }
        if (toolName) consumed.push(toolName);
        this.place(item, startMs);
        continue;
      }
      const calls = toolCallsOf(m);
      // An assistant message whose tool calls are all known (shown already, or made by this
      // trace's responses) is the same message again: one item per tool call id.
      if (
        calls.length &&
        calls.every(
          (c) =>
            c.id &&
            (this.callKeys.has(callKey(c.id, c.name, c.arguments)) ||
              respondedKeys.has(callKey(c.id, c.name, c.arguments))),
        )
      ) {
        echoed.add(fingerprintAt(j));
        continue;
      }
      for (const item of messageItems(t, m, requestSource(j), origin, base)) {
        if (item.type === "tool_call" && !this.claimCall(item)) continue;
        if (rewritten && item.type !== "tool_call") item.edited = true;
        this.place(item, startMs);
      }
    }
    if (t.chained) this.conversation.setChain(t.chained.n, t.chained.chains[t.chained.n - t.chained.from]);
    else this.conversation.setList(messages.map((_, j) => fingerprintAt(j)));

    responses.forEach((r, ri) => {
      const choice = r?.choices?.[0];
      const message = choice?.message;
      if (!message) return;
      const endMs = Math.round(startMs + step * (ri + 1));
      const span = spans.responses[ri];
      const rbase = {
        traceId: t.traceId,
        spanId: span?.id ?? null,
        timestamp: new Date(endMs).toISOString(),
        spanAttributes: span?.attributes ?? {},
      };
      const extra = { latencyMs: Math.round(step) };
      for (const item of messageItems(t, message, responseSource(ri), `${t.traceId}:res:${ri}`, rbase, extra)) {
        if (item.type === "tool_call" && !this.claimCall(item)) continue;
        this.place(item, endMs);
      }
      if (ri === 0) {
        // The call is known now: name the results the request carried ahead of it.
        for (const d of deferredResults) {
          d.item.toolName ??= this.callNames.get(d.item.toolCallId as string) ?? null;
          this.place(d.item, d.ms);
        }
      }
      // A response echoed by this trace's own request is in the conversation already.
      const fp = messageFingerprint(message);
      if (echoed.has(fp)) echoed.delete(fp);
      else this.conversation.push(fp);
    });
    return { consumedTools: consumed };
  }

  addEvent(e: EventInput): void {
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
    this.place(item, e.timestamp.getTime());
  }

  /** The kept items in time order, and how many were left out past the caps. */
  finish(): { items: TranscriptItem[]; truncated: boolean; dropped: number } {
    const sorted = [...this.placed].sort((a, b) => a.ms - b.ms || a.seq - b.seq);
    return { items: sorted.map((p) => p.item), truncated: this.dropped > 0, dropped: this.dropped };
  }

  /**
   * The request's fresh messages against the conversation the model saw last (align.ts). A request
   * from a digest is recognised as a plain extension by its chain hash at the conversation's
   * length; anything else needs the payload (NeedsPayload), as does a whole request after a
   * conversation known by its chain only.
   */
  private align(
    t: TraceInput,
    messages: any[],
  ): { fresh: number[]; rewritten: boolean; fingerprintAt: (j: number) => string } {
    const c = t.chained;
    if (!c) {
      const fingerprints = messages.map(messageFingerprint);
      return {
        ...alignMessages(this.conversation.fingerprints(), fingerprints),
        fingerprintAt: (j) => fingerprints[j],
      };
    }
    const at = this.conversation.size;
    if (at < c.from || at > c.n || c.chains[at - c.from] !== this.conversation.chain())
      throw new NeedsPayload("a request that does not extend the conversation");
    const fresh: number[] = [];
    for (let j = at; j < c.n; j++) fresh.push(j);
    const tail = new Map<number, string>();
    return {
      fresh,
      rewritten: false,
      fingerprintAt: (j) => {
        let fp = tail.get(j);
        if (fp === undefined) tail.set(j, (fp = messageFingerprint(messages[j])));
        return fp;
      },
    };
  }

  private isRespondedHere(callId: string, respondedKeys: Set<string>): boolean {
    for (const k of respondedKeys) if (k.startsWith(`${callId}\u0000`)) return true;
    return false;
  }

  /** First sighting of a tool call id (with this name) wins; the same call again is no new item. */
  private claimCall(item: TranscriptItem): boolean {
    const id = typeof item.toolCallId === "string" ? item.toolCallId : null;
    if (!id) return true;
    const key = callKey(id, (item.toolName as string | null) ?? null, String(item.content ?? ""));
    if (this.callKeys.has(key)) return false;
    this.callKeys.add(key);
    // A client that reuses an id for a new call (some servers number calls per turn): a new
    // item with its own id, and its result is expected anew.
    const occurrence = (this.occurrences.get(id) ?? -1) + 1;
    this.occurrences.set(id, occurrence);
    if (occurrence > 0) this.answered.delete(id);
    this.callNames.set(id, (item.toolName as string | null) ?? null);
    item.id =
      occurrence > 0
        ? itemId("tool_call", id, String(item.toolName ?? ""), String(occurrence))
        : itemId("tool_call", id, String(item.toolName ?? ""));
    return true;
  }

  private place(item: TranscriptItem, ms: number): void {
    this.onItem?.(item);
    const size = 300 + approxSize(item.content) + approxSize(item.reasoning) + attributesSize(item.spanAttributes);
    // Past a cap the transcript stops: it is the session's first items, never one with holes.
    if (this.dropped > 0 || this.placed.length >= this.caps.maxItems || this.bytes + size > this.caps.maxBytes) {
      this.dropped++;
      return;
    }
    this.bytes += size;
    this.placed.push({ item, ms, seq: this.seq++ });
  }
}

/** One tool call: its id, tool and (canonical) arguments. */
const callKey = (id: string, name: string | null, args: string) =>
  `${id}\u0000${name ?? ""}\u0000${canonicalArgs(args)}`;

/** Arguments as canonical JSON (sorted keys), or whitespace-normalized text when not JSON. */
export function canonicalArgs(args: unknown): string {
  if (typeof args !== "string") return canonicalJson(args ?? null);
  try {
    return canonicalJson(JSON.parse(args));
  } catch {
    return args.replace(/\s+/g, " ").trim();
  }
}

/** Sizes of span attributes: one object per span, shared by its items and never changed after derivation. */
const attributeSizes = new WeakMap<object, number>();
function attributesSize(v: unknown): number {
  if (v === null || typeof v !== "object") return approxSize(v);
  let size = attributeSizes.get(v);
  if (size === undefined) {
    size = approxSize(v);
    attributeSizes.set(v, size);
  }
  return size;
}

export function approxSize(v: unknown): number {
  if (v == null) return 0;
  if (typeof v === "string") return v.length;
  try {
    return JSON.stringify(v).length;
  } catch {
    return 0;
  }
}

export { type ToolCallRef, toolCallsOf } from "@cellar/shared/analysis/transcript-source";

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

/** Whitespace that `replace(/\s+/g, " ")` would change: a run, or a whitespace other than a space. */
const UNSQUASHED = /\s\s|[^\S ]/;
/** Runs of whitespace as one space; the text itself when it has none to squash (no match per word). */
const squashSpaces = (text: string) => (UNSQUASHED.test(text) ? text.replace(/\s+/g, " ") : text);
const WHITESPACE = /\s/;
const isObject = (v: unknown) => v !== null && typeof v === "object";

/** Identity of a message for alignment: role, whitespace-normalized content, tool calls, call id. */
export function messageFingerprint(m: any): string {
  const content = Array.isArray(m?.content)
    ? m.content.map((p: any) => (typeof p?.text === "string" ? p.text : canonicalJson(p))).join("\n")
    : m?.content;
  const text =
    typeof content === "string" ? squashSpaces(content).trim() : content == null ? "" : canonicalJson(content);
  const role = m?.role === "developer" ? "system" : m?.role;
  const calls = toolCallsOf(m).map((c) => [
    c.id,
    c.name,
    WHITESPACE.test(c.arguments) ? c.arguments.replace(/\s+/g, "") : c.arguments,
  ]);
  const fingerprint = [role ?? null, text, calls, m?.tool_call_id ?? null];
  // Strings, null and arrays of them: canonical JSON is plain JSON (no keys to sort).
  return isObject(role) || isObject(m?.tool_call_id) ? canonicalJson(fingerprint) : JSON.stringify(fingerprint);
}

export function eventItemId(eventPk: string): string {
  return `evt_${stableId16(eventPk)}`;
}

export function itemId(origin: string, ...more: string[]): string {
  return `itm_${stableId16(origin, ...more)}`;
}

/** A message's items (`m`: the payload's message at `source`); their content (and a response's fields) taken from there. */
function messageItems(
  t: TraceInput,
  m: any,
  source: TranscriptSource,
  origin: string,
  base: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): TranscriptItem[] {
  const role = typeof m?.role === "string" ? m.role : "unknown";
  const out: TranscriptItem[] = [];
  const type: ItemType =
    role === "system" || role === "developer" ? "system" : role === "assistant" ? "assistant" : "user";
  const calls = toolCallsOf(m);
  const hasContent = contentText(m?.content).trim() !== "" || (Array.isArray(m?.content) && m.content.length > 0);
  const refer = (item: TranscriptItem, at: TranscriptSource) => {
    if (t.pk) references.set(item, { tracePk: t.pk, traceId: t.traceId, source: at });
    return item;
  };
  if (hasContent || calls.length === 0) {
    const item = {
      id: itemId(origin),
      type,
      role,
      ...(sourcedFields(t.payload, source, type) as { content: unknown }),
      ...(base as any),
      ...(type === "assistant" ? extra : {}),
    };
    out.push(refer(item, source));
  }
  calls.forEach((_, i) => {
    const item = {
      id: itemId(origin, "call", String(i)),
      type: "tool_call" as const,
      role,
      ...(sourcedFields(t.payload, callSource(source, i), "tool_call") as { content: unknown }),
      toolName: calls[i].name,
      toolCallId: calls[i].id,
      ...(base as any),
    };
    out.push(refer(item, callSource(source, i)));
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

/**
 * The order a session's traces are analysed in, as the maturation store reads them (store.ts):
 * by start, then end, then trace id. The end breaks ties of start stamps within one clock tick
 * (an SDK stamps milliseconds): of two calls made one after the other, the earlier ended no
 * later than the later one started, whatever their (random) trace ids.
 */
export function traceOrder(x: TraceInput, y: TraceInput): number {
  return (
    x.startTime.getTime() - y.startTime.getTime() ||
    x.endTime.getTime() - y.endTime.getTime() ||
    (x.traceId < y.traceId ? -1 : x.traceId > y.traceId ? 1 : 0)
  );
}

/** Whole-history form (tests): traces in `traceOrder`, then events. */
export function buildTranscript(
  traces: TraceInput[],
  events: EventInput[],
  caps: TranscriptCaps = DEFAULT_TRANSCRIPT_CAPS,
) {
  const b = new TranscriptBuilder(caps);
  for (const t of [...traces].sort(traceOrder)) b.addTrace(t);
  for (const e of events) b.addEvent(e);
  return { ...b.finish(), impliedAnswered: b.impliedAnswered };
}
