/**
 * The corpus's reference: a session is written as a script of what really happened (the app's
 * conversation, each model call, each tool run, each event), and this writer renders both the
 * payloads a client would send and the expected results, straight from the script. It shares no
 * code with the processor: the expected transcript comes from which message the script added
 * when, not from reading payloads back; costs come from its own price list; problems are the
 * faults the script injected (docs/analysis.md states the rules both follow).
 */

import type { Msg } from "./message.ts";
import { type Instrumentation, otlpExport } from "./otlp-writer";
import { REFERENCE_PRICES, referenceCost } from "./reference-prices";

export type { Msg } from "./message.ts";

export interface ExpectedItem {
  type: "system" | "user" | "assistant" | "tool_call" | "tool_result" | "event";
  content: unknown;
  timestamp: string;
  toolName?: string | null;
  toolCallId?: string | null;
  edited?: true;
}

export interface CallSpec {
  /** Price-list name (or the raw name of an unknown model). */
  model: string;
  /** The model id the app sends (default: `model`), e.g. a Bedrock id for `nova-pro`. */
  requestModel?: string;
  /** Response model as the provider reports it (default: model + a dated suffix). */
  responseModel?: string;
  prompt: number;
  completion: number;
  cached?: number;
  /** Cache writes (Anthropic, Bedrock): part of `prompt`. */
  written?: number;
  reasoning?: number;
  /** What the reply is: text, tool calls, or a bare message object. */
  text?: string | null;
  toolCalls?: Array<{ id: string; name: string; args: unknown }>;
  message?: Msg;
  finish?: string;
}

export type History =
  | { kind: "full" }
  | { kind: "window"; keep: number }
  | { kind: "summary"; text: string; keep: number };

export interface ExpectedCall {
  model: string; // price-list name, or the raw name when unknown
  prompt: number;
  completion: number;
  cached: number;
  reasoning: number;
  costUsd: number | null;
}

export interface ExpectedFinding {
  detector: string;
  key: string;
}

interface Pending {
  msg: Msg;
  expected: ExpectedItem[];
}

export class SessionWriter {
  /** Per call: its trace as Cellar stores it (ids and times the keys use). */
  readonly traces: any[] = [];
  /** What the app's client sends for each call, in order (same index as `traces`). */
  readonly sends: Array<{ path: "/raw/traces" | "/v1/traces"; body: unknown }> = [];
  readonly events: any[] = [];
  readonly expected: Array<ExpectedItem & { order: number }> = [];
  readonly calls: ExpectedCall[] = [];
  readonly findings: ExpectedFinding[] = [];
  /** Index into `traces` after which the session pauses (resumes after maturing). */
  resumeAt: number | null = null;
  private order = 0;
  /** The app's conversation (what it would send with full history). */
  private conversation: Msg[] = [];
  /** Messages the app added since the last call (first seen at the next request). */
  private pending: Pending[] = [];
  /** Tool results a 2-response trace consumed but no payload carried yet: shown when one does. */
  private hidden = new Map<Msg, ExpectedItem>();
  private summaryShown = new Set<string>();
  private traceCount = 0;
  private clock: number;

  constructor(
    readonly sessionId: string,
    readonly serviceName: string,
    startMs: number,
    public history: History = { kind: "full" },
    /** Sent over OTLP by this instrumentation instead of `/raw/traces` (otlp-writer.ts). */
    readonly otlp: Instrumentation | null = null,
  ) {
    this.clock = startMs;
  }

  get channel(): "raw" | "otlp" {
    return this.otlp ? "otlp" : "raw";
  }

  /** Moves the session's clock (ms). */
  wait(ms: number): this {
    this.clock += ms;
    return this;
  }
  get now(): number {
    return this.clock;
  }

  system(text: string): this {
    return this.add({ role: "system", content: text }, { type: "system", content: text });
  }
  user(text: string): this {
    return this.add({ role: "user", content: text }, { type: "user", content: text });
  }
  /** Tool results the app ran (after a 1-response call made the tool calls). */
  toolResults(results: Array<{ id: string; name: string; content: string }>): this {
    for (const r of results)
      this.add(
        { role: "tool", tool_call_id: r.id, content: r.content },
        { type: "tool_result", content: r.content, toolCallId: r.id, toolName: r.name },
      );
    return this;
  }
  /** The app rewrites its latest user message (the transcript keeps both, the new one edited). */
  editLastUser(text: string): this {
    for (let i = this.conversation.length - 1; i >= 0; i--) {
      if (this.conversation[i].role !== "user") continue;
      this.conversation.splice(i);
      this.pending = this.pending.filter((p) => this.conversation.includes(p.msg));
      return this.add({ role: "user", content: text }, { type: "user", content: text, edited: true });
    }
    throw new Error("no user message to edit");
  }
  event(
    offsetMs: number,
    name: string,
    severity?: number,
    extra: { attributes?: Record<string, unknown>; traceId?: string } = {},
  ): this {
    const at = this.clock + offsetMs;
    this.events.push({
      name,
      session_id: this.sessionId,
      service_name: this.serviceName,
      timestamp: iso(at),
      ...(severity ? { severity_number: severity } : {}),
      ...(extra.attributes ? { attributes: extra.attributes } : {}),
      ...(extra.traceId ? { trace_id: extra.traceId } : {}),
      environment: "corpus",
    });
    this.push({ type: "event", content: name, timestamp: iso(at) });
    return this;
  }

  /** One model call (1 response). */
  call(spec: CallSpec, durationMs: number): this {
    const start = this.clock;
    const requestMessages = this.request();
    const message = replyMessage(spec);
    this.emitTrace(start, durationMs, requestMessages, [this.response(spec, message)], [spec]);
    this.showPending(start);
    this.showResponse(message, spec, start + durationMs);
    this.conversation.push(message);
    this.clock = start + durationMs;
    return this;
  }

  /**
   * A tool-call workflow in one trace (2 responses): the first response calls tools, the app
   * runs them, the second answers. `convention`: whose request the payload carries, the first
   * call's (`first`) or the second call's (`second`, which already holds the calls and results).
   */
  toolWorkflow(
    first: CallSpec,
    results: Array<{ id: string; name: string; content: string }>,
    second: CallSpec,
    durationMs: number,
    convention: "first" | "second",
  ): this {
    const start = this.clock;
    const callMessage = replyMessage(first);
    const resultMessages: Msg[] = results.map((r) => ({ role: "tool", tool_call_id: r.id, content: r.content }));
    const answer = replyMessage(second);
    const before = this.request();
    const requestMessages = convention === "first" ? before : [...before, callMessage, ...resultMessages];
    this.emitTrace(
      start,
      durationMs,
      requestMessages,
      [this.response(first, callMessage), this.response(second, answer)],
      [first, second],
    );
    const mid = start + durationMs / 2;
    this.showPending(start);
    this.showResponse(callMessage, first, mid);
    const resultItems = results.map((r) => ({
      type: "tool_result" as const,
      content: r.content,
      toolCallId: r.id,
      toolName: r.name,
      timestamp: iso(mid),
    }));
    if (convention === "second") for (const item of resultItems) this.push(item);
    else resultMessages.forEach((m, i) => this.hidden.set(m, resultItems[i]));
    this.showResponse(answer, second, start + durationMs);
    this.conversation.push(callMessage, ...resultMessages, answer);
    this.clock = start + durationMs;
    return this;
  }

  /** Marks where the session pauses: traces after this point are sent after it has matured once. */
  pause(): this {
    this.resumeAt = this.traces.length;
    return this;
  }

  expectFinding(detector: string, key: string): this {
    this.findings.push({ detector, key });
    return this;
  }
  /** Key of a call-level finding: trace id @ the call's start (ms). */
  lastCallKey(responseIndex = 0): string {
    const t = this.traces[this.traces.length - 1];
    const start = Date.parse(t.start_time);
    const step = (Date.parse(t.end_time) - start) / t.responses.length;
    return `${t.trace_id}@${start + step * responseIndex}`;
  }
  /** The id of the latest trace (what an event names as its trace). */
  get lastTraceId(): string {
    return this.traces[this.traces.length - 1].trace_id;
  }
  /** Key of an event finding. */
  eventKey(name: string, offsetMs: number): string {
    return `${name}@${this.clock + offsetMs}`;
  }

  /** Expected transcript: by time, then the order the script produced them. */
  transcript(): ExpectedItem[] {
    return [...this.expected]
      .sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.order - b.order)
      .map(({ order, ...item }) => item);
  }

  private add(msg: Msg, item: Omit<ExpectedItem, "timestamp">): this {
    this.conversation.push(msg);
    this.pending.push({ msg, expected: [{ ...item, timestamp: "" }] });
    return this;
  }

  private push(item: ExpectedItem) {
    this.expected.push({ ...item, order: this.order++ });
  }

  private showPending(start: number) {
    for (const p of this.pending) for (const item of p.expected) this.push({ ...item, timestamp: iso(start) });
    this.pending = [];
  }

  private showResponse(message: Msg, spec: CallSpec, endMs: number) {
    const text = typeof message.content === "string" ? message.content : null;
    if (
      (text && text.trim()) ||
      (Array.isArray(message.content) && message.content.length) ||
      !message.tool_calls?.length
    ) {
      this.push({ type: "assistant", content: message.content ?? null, timestamp: iso(endMs) });
    }
    for (const c of message.tool_calls ?? [])
      this.push({
        type: "tool_call",
        content: c.function.arguments,
        toolName: c.function.name,
        toolCallId: c.id,
        timestamp: iso(endMs),
      });
    const known = REFERENCE_PRICES[spec.model] ? spec.model : null;
    this.calls.push({
      model: known ?? spec.responseModel ?? spec.model,
      prompt: spec.prompt,
      completion: spec.completion,
      cached: spec.cached ?? 0,
      reasoning: spec.reasoning ?? 0,
      costUsd: known ? referenceCost(known, spec.prompt, spec.completion, spec.cached ?? 0, spec.written ?? 0) : null,
    });
  }

  /** What the app sends: its history as the session's history mode shapes it. */
  private request(): Msg[] {
    // Results consumed by an earlier 2-response trace are first carried now: shown at their own time.
    for (const m of this.conversation) {
      const item = this.hidden.get(m);
      if (item && this.carries(m)) {
        this.push(item);
        this.hidden.delete(m);
      }
    }
    const h = this.history;
    if (h.kind === "full") return [...this.conversation];
    const { system, rest, tail } = this.shape(h.keep);
    if (h.kind === "window" || tail.length === rest.length) return [...system, ...tail];
    const summary: Msg = { role: "system", content: h.text };
    if (!this.summaryShown.has(h.text)) {
      this.summaryShown.add(h.text);
      this.push({ type: "system", content: h.text, timestamp: iso(this.clock) });
    }
    return [...system, summary, ...tail];
  }

  private carries(m: Msg): boolean {
    const h = this.history;
    return h.kind === "full" || this.shape(h.keep).tail.includes(m);
  }

  /** The first system message is always kept; of the rest, the last `keep`. */
  private shape(keep: number) {
    const first = this.conversation.find((m) => m.role === "system");
    const system = first ? [first] : [];
    const rest = this.conversation.filter((m) => m !== first);
    return { system, rest, tail: rest.slice(-keep) };
  }

  private response(spec: CallSpec, message: Msg) {
    const usage: Record<string, unknown> = {
      prompt_tokens: spec.prompt,
      completion_tokens: spec.completion,
      total_tokens: spec.prompt + spec.completion,
    };
    if (spec.cached) usage.prompt_tokens_details = { cached_tokens: spec.cached };
    if (spec.reasoning) usage.completion_tokens_details = { reasoning_tokens: spec.reasoning };
    return {
      id: `chatcmpl-${this.sessionId}-${this.traceCount}-${this.traces.length}`,
      object: "chat.completion",
      model:
        spec.responseModel ??
        spec.requestModel ??
        (REFERENCE_PRICES[spec.model] ? `${spec.model}-2025-01-31` : spec.model),
      choices: [{ index: 0, message, finish_reason: spec.finish ?? (message.tool_calls ? "tool_calls" : "stop") }],
      usage,
    };
  }

  private emitTrace(start: number, durationMs: number, messages: Msg[], responses: any[], specs: CallSpec[]) {
    const raw = {
      provider: "openai",
      service_name: this.serviceName,
      session_id: this.sessionId,
      environment: "corpus",
      trace_id: `${this.sessionId}-t${++this.traceCount}`,
      start_time: iso(start),
      end_time: iso(start + durationMs),
      request: {
        model: specs[0].requestModel ?? responses[0].model.replace(/-\d{4}-\d{2}-\d{2}$/, ""),
        messages: messages.map((m) => ({ ...m })),
      },
      responses,
    };
    if (!this.otlp) {
      this.traces.push(raw);
      this.sends.push({ path: "/raw/traces", body: raw });
      return;
    }
    if (responses.length !== 1) throw new Error("an OTLP span is one model call: use call(), not toolWorkflow()");
    const spec = specs[0];
    const { body, traceId } = otlpExport(
      {
        sessionId: this.sessionId,
        serviceName: this.serviceName,
        index: this.traceCount,
        startMs: start,
        endMs: start + durationMs,
        requestModel: raw.request.model,
        responseModel: responses[0].model,
        request: messages,
        reply: responses[0].choices[0].message,
        finish: responses[0].choices[0].finish_reason,
        usage: {
          prompt: spec.prompt,
          completion: spec.completion,
          cached: spec.cached ?? 0,
          written: spec.written ?? 0,
        },
      },
      this.otlp,
    );
    this.traces.push({ ...raw, trace_id: traceId });
    this.sends.push({ path: "/v1/traces", body });
  }
}

function replyMessage(spec: CallSpec): Msg {
  if (spec.message) return spec.message;
  const m: Msg = { role: "assistant", content: spec.text ?? null };
  if (spec.toolCalls)
    m.tool_calls = spec.toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
  return m;
}

export const iso = (ms: number) => new Date(ms).toISOString();
