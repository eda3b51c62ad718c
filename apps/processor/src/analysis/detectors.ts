import { canonicalJson } from "@cellar/shared/crypto";
import { priceFor } from "@cellar/shared/pricing/openai";
import { stableId } from "../ingest/spans";
import type { ModelCall } from "./calls";
import { eventItemId, type EventInput, type TranscriptItem } from "./transcript";

export type Severity = "low" | "medium" | "high" | "critical";

export interface Finding {
  detector: string;
  /** Same problem across sessions = same fingerprint (per service): detector + a stable key. */
  fingerprint: string;
  severity: Severity;
  title: string;
  traceId: string | null;
  spanId: string | null;
  occurredAt: Date;
  evidence: Record<string, unknown>;
}

/** Per model (price-table name, else raw): median latency of the service's recent calls. */
export type LatencyNorms = Map<string, { p50Ms: number; samples: number }>;

export interface DetectorInput {
  calls: ModelCall[];
  items: TranscriptItem[];
  events: EventInput[];
  impliedAnswered: Set<string>;
  latencyNorms?: LatencyNorms;
}

/** Rules' constants, documented in docs/analysis.md. */
export const DETECTOR_RULES = {
  /** The same tool with the same (canonical) arguments this many times in one session = a loop. */
  loopRepeats: 3,
  /** Latency outlier: above `factor` x the model's service median and at least `minExcessMs` above it, with enough samples. */
  latency: { factor: 3, minExcessMs: 2_000, minSamples: 20 },
  /** Prompt tokens at or above this share of the model's context window. */
  contextShare: 0.9,
  /** Refusal phrasing looked for at the start of an assistant reply (first 300 characters). */
  refusalPatterns: [
    /^\W*(?:i(?:'|’)?m|i am) (?:really |very )?(?:sorry|afraid)\b[^.!?]{0,60}\b(?:can(?:'|’)?t|cannot|can not|unable to|not able to|won(?:'|’)?t)\b/i,
    /^\W*(?:sorry,? )?i (?:can(?:'|’)?t|cannot|can not|won(?:'|’)?t|am unable to|am not able to|(?:'|’)m unable to) (?:help|assist|comply|provide|do that|fulfil|fulfill|answer|support|engage)/i,
  ],
};

const fp = (detector: string, key: string) => `${detector}:${stableId(detector, key).slice(0, 16)}`;
const modelKey = (c: ModelCall) => c.pricedModel ?? c.model ?? "unknown";

/** Runs every detector; deterministic for the same input. */
export function detectProblems(input: DetectorInput): Finding[] {
  return [
    ...finishReasonFindings(input.calls),
    ...unansweredToolCalls(input.items, input.impliedAnswered),
    ...toolLoops(input.items),
    ...errorEvents(input.events),
    ...emptyResponses(input.calls),
    ...refusals(input.calls),
    ...latencyOutliers(input.calls, input.latencyNorms),
    ...contextWindow(input.calls),
  ];
}

function callFinding(c: ModelCall, detector: string, severity: Severity, title: string, evidence: Record<string, unknown>): Finding {
  return {
    detector, fingerprint: fp(detector, modelKey(c)), severity, title, traceId: c.traceId, spanId: c.spanId, occurredAt: c.at,
    evidence: { itemId: c.itemId, model: c.model, ...evidence },
  };
}

/** finish_reason `length` (cut off at the token limit) and `content_filter`. */
export function finishReasonFindings(calls: ModelCall[]): Finding[] {
  const out: Finding[] = [];
  for (const c of calls) {
    if (c.finishReason === "length") {
      out.push(callFinding(c, "response_cut_off", "medium", `Response cut off at the token limit (${modelKey(c)})`, { finishReason: c.finishReason, completionTokens: c.completionTokens }));
    } else if (c.finishReason === "content_filter") {
      out.push(callFinding(c, "content_filtered", "high", `Response blocked by the content filter (${modelKey(c)})`, { finishReason: c.finishReason }));
    }
  }
  return out;
}

/** A tool call with an id whose result never appears in the session (2-response traces answer their own). */
export function unansweredToolCalls(items: TranscriptItem[], impliedAnswered: Set<string>): Finding[] {
  const answered = new Set(items.filter((i) => i.type === "tool_result" && i.toolCallId).map((i) => i.toolCallId as string));
  return items
    .filter((i) => i.type === "tool_call" && typeof i.toolCallId === "string" && !answered.has(i.toolCallId) && !impliedAnswered.has(i.toolCallId))
    .map((i) => ({
      detector: "tool_call_unanswered", fingerprint: fp("tool_call_unanswered", String(i.toolName)), severity: "medium" as const,
      title: `Tool call never answered: ${i.toolName ?? "unknown tool"}`, traceId: i.traceId, spanId: i.spanId, occurredAt: new Date(i.timestamp),
      evidence: { itemId: i.id, toolName: i.toolName, toolCallId: i.toolCallId },
    }));
}

function canonicalArgs(args: unknown): string {
  if (typeof args !== "string") return canonicalJson(args ?? null);
  try {
    return canonicalJson(JSON.parse(args));
  } catch {
    return args.replace(/\s+/g, " ").trim();
  }
}

/** The same tool called with the same arguments `loopRepeats`+ times: one finding per tool + arguments. */
export function toolLoops(items: TranscriptItem[]): Finding[] {
  const groups = new Map<string, TranscriptItem[]>();
  for (const i of items) {
    if (i.type !== "tool_call") continue;
    const key = `${i.toolName}\u0000${canonicalArgs(i.content)}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  const out: Finding[] = [];
  for (const list of groups.values()) {
    if (list.length < DETECTOR_RULES.loopRepeats) continue;
    const at = list[DETECTOR_RULES.loopRepeats - 1];
    out.push({
      detector: "tool_loop", fingerprint: fp("tool_loop", String(at.toolName)), severity: "medium",
      title: `Tool loop: ${at.toolName ?? "unknown tool"} called repeatedly with the same arguments`, traceId: at.traceId, spanId: at.spanId, occurredAt: new Date(at.timestamp),
      evidence: { itemId: at.id, toolName: at.toolName, arguments: canonicalArgs(at.content).slice(0, 500), count: list.length, itemIds: list.map((i) => i.id) },
    });
  }
  return out;
}

/** Events with severity_number >= 17 (OpenTelemetry ERROR 17-20, FATAL 21-24). */
export function errorEvents(events: EventInput[]): Finding[] {
  return events
    .filter((e) => (e.severityNumber ?? 0) >= 17)
    .map((e) => ({
      detector: "error_event", fingerprint: fp("error_event", e.name), severity: ((e.severityNumber ?? 0) >= 21 ? "critical" : "high") as Severity,
      title: `Error event: ${e.name}`, traceId: e.traceId, spanId: null, occurredAt: e.timestamp,
      evidence: { itemId: eventItemId(e.id), name: e.name, severityNumber: e.severityNumber, attributes: e.attributes, body: e.body },
    }));
}

/** A reply with no text, no tool calls and no refusal (cut-off and filtered replies have their own detectors). */
export function emptyResponses(calls: ModelCall[]): Finding[] {
  return calls
    .filter((c) => c.finishReason !== "length" && c.finishReason !== "content_filter")
    .filter((c) => c.toolCalls.length === 0 && c.text.trim() === "" && !(typeof c.message?.refusal === "string" && c.message.refusal))
    .filter((c) => !(Array.isArray(c.message?.content) && c.message.content.length > 0)) // non-text parts (audio) are content
    .map((c) => callFinding(c, "empty_response", "medium", `Empty assistant response (${modelKey(c)})`, { finishReason: c.finishReason, completionTokens: c.completionTokens }));
}

/** `message.refusal` set, or the reply opens with refusal phrasing (DETECTOR_RULES.refusalPatterns). */
export function refusals(calls: ModelCall[]): Finding[] {
  const out: Finding[] = [];
  for (const c of calls) {
    const explicit = typeof c.message?.refusal === "string" && c.message.refusal ? (c.message.refusal as string) : null;
    const head = c.text.slice(0, 300);
    const phrased = !explicit && DETECTOR_RULES.refusalPatterns.some((re) => re.test(head));
    if (explicit || phrased) {
      out.push(callFinding(c, "refusal", "low", `Model refused (${modelKey(c)})`, { refusal: explicit, text: explicit ? null : head, source: explicit ? "message.refusal" : "phrasing" }));
    }
  }
  return out;
}

/** A call far slower than the service's norm for that model (DETECTOR_RULES.latency). */
export function latencyOutliers(calls: ModelCall[], norms: LatencyNorms | undefined): Finding[] {
  if (!norms) return [];
  const r = DETECTOR_RULES.latency;
  const out: Finding[] = [];
  for (const c of calls) {
    const norm = norms.get(modelKey(c));
    if (!norm || norm.samples < r.minSamples || norm.p50Ms <= 0) continue;
    if (c.latencyMs > r.factor * norm.p50Ms && c.latencyMs - norm.p50Ms >= r.minExcessMs) {
      out.push(callFinding(c, "latency_outlier", "medium", `Latency far above the service norm (${modelKey(c)})`, {
        latencyMs: c.latencyMs, serviceP50Ms: norm.p50Ms, samples: norm.samples, factor: Math.round((c.latencyMs / norm.p50Ms) * 10) / 10,
      }));
    }
  }
  return out;
}

/** Prompt tokens at or above DETECTOR_RULES.contextShare of the model's context window (known models only). */
export function contextWindow(calls: ModelCall[]): Finding[] {
  const out: Finding[] = [];
  for (const c of calls) {
    // From the tenant's price book (calls.ts), else the built-in table.
    const window = c.contextWindow ?? priceFor(c.pricedModel, c.at)?.contextWindow;
    if (!window || c.promptTokens < DETECTOR_RULES.contextShare * window) continue;
    out.push(callFinding(c, "context_window_near", "medium", `Prompt near the context window (${modelKey(c)})`, {
      promptTokens: c.promptTokens, contextWindow: window, share: Math.round((c.promptTokens / window) * 1000) / 1000,
    }));
  }
  return out;
}
