import { priceFor } from "@cellar/shared/pricing/table";
import { stableId16 } from "@cellar/shared/spans";
import { stableId } from "../ingest/spans.ts";
import type { ModelCall } from "./calls.ts";
import type { DetectorConfig } from "@cellar/shared/analysis/detector-config";
import { isRefusal } from "./refusal.ts";
import { stopClass } from "./stop-reasons.ts";
import { canonicalArgs, eventItemId, type EventInput, type TranscriptItem } from "./transcript.ts";

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

/**
 * A service's latency baseline per model (price-table name, else raw): output-token-normalised
 * latency (ms per output token, tokens floored), its median and scaled MAD over `samples` calls.
 */
export type LatencyNorms = Map<string, LatencyBaseline>;
export interface LatencyBaseline {
  medianMsPerToken: number;
  madMsPerToken: number;
  samples: number;
}

export const fp = (detector: string, key: string) => `${detector}:${stableId16(detector, key)}`;
export const modelKey = (c: { pricedModel: string | null; model: string | null }) =>
  c.pricedModel ?? c.model ?? "unknown";

function callFinding(
  c: ModelCall,
  detector: string,
  severity: Severity,
  title: string,
  evidence: Record<string, unknown>,
): Finding {
  return {
    detector,
    fingerprint: fp(detector, modelKey(c)),
    severity,
    title,
    traceId: c.traceId,
    spanId: c.spanId,
    occurredAt: c.at,
    evidence: { itemId: c.itemId, model: c.model, ...evidence },
  };
}

/**
 * The per-call rules, one function each (wired by detectors-registry.ts from the declarations in
 * shared/analysis/detector-config.ts): a finding for the call, or null.
 */
export function cutOff(c: ModelCall): Finding | null {
  if (stopClass(c.finishReason) !== "length") return null;
  return callFinding(c, "response_cut_off", "medium", `Response cut off at the token limit (${modelKey(c)})`, {
    finishReason: c.finishReason,
    completionTokens: c.completionTokens,
  });
}

export function contentFiltered(c: ModelCall): Finding | null {
  if (stopClass(c.finishReason) !== "content_filter") return null;
  return callFinding(c, "content_filtered", "high", `Response blocked by the content filter (${modelKey(c)})`, {
    finishReason: c.finishReason,
  });
}

export function emptyResponse(c: ModelCall): Finding | null {
  const stop = stopClass(c.finishReason);
  if (
    !c.hasMessage ||
    stop === "length" ||
    stop === "content_filter" ||
    stop === "refusal" ||
    c.toolCalls.length > 0 ||
    c.textHead.trim() !== "" ||
    c.refusal ||
    c.nonTextContent
  )
    return null;
  return callFinding(c, "empty_response", "medium", `Empty assistant response (${modelKey(c)})`, {
    finishReason: c.finishReason,
    completionTokens: c.completionTokens,
  });
}

export function refusalFinding(c: ModelCall, r: DetectorConfig["refusal"]): Finding | null {
  const verdict = isRefusal(c, r.maxChars);
  return verdict ? callFinding(c, "refusal", "low", `Model refused (${modelKey(c)})`, verdict) : null;
}

export function latencyFinding(
  c: ModelCall,
  r: DetectorConfig["latency_outlier"],
  norms: LatencyNorms | undefined,
): Finding | null {
  const hit = latencyOutlier(c, r, norms?.get(modelKey(c)));
  return hit
    ? callFinding(c, "latency_outlier", "medium", `Latency far above the service norm (${modelKey(c)})`, hit)
    : null;
}

export function contextWindowNear(c: ModelCall, r: DetectorConfig["context_window_near"]): Finding | null {
  // From the tenant's price book (calls.ts), else the built-in table.
  const window = c.contextWindow ?? priceFor(c.pricedModel, c.at)?.contextWindow;
  if (!window || c.promptTokens < r.share * window) return null;
  return callFinding(c, "context_window_near", "medium", `Prompt near the context window (${modelKey(c)})`, {
    promptTokens: c.promptTokens,
    contextWindow: window,
    share: Math.round((c.promptTokens / window) * 1000) / 1000,
  });
}

/** ms per output token, the token count floored (short replies are dominated by fixed overhead). */
export function msPerToken(latencyMs: number, completionTokens: number, tokenFloor: number): number {
  return latencyMs / Math.max(completionTokens, tokenFloor, 1);
}

/** Robust outlier rule (docs/analysis.md): evidence when the call is an outlier, else null. */
export function latencyOutlier(
  c: Pick<ModelCall, "latencyMs" | "completionTokens">,
  r: DetectorConfig["latency_outlier"],
  base: LatencyBaseline | undefined,
): Record<string, unknown> | null {
  if (!base || base.samples < r.minSamples || base.medianMsPerToken <= 0) return null;
  const x = msPerToken(c.latencyMs, c.completionTokens, r.tokenFloor);
  const spread = Math.max(base.madMsPerToken, r.minSpreadShare * base.medianMsPerToken);
  const limit = base.medianMsPerToken + r.madK * spread;
  const expectedMs = base.medianMsPerToken * Math.max(c.completionTokens, r.tokenFloor, 1);
  if (x <= limit || c.latencyMs - expectedMs < r.minExcessMs) return null;
  const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
  return {
    latencyMs: c.latencyMs,
    completionTokens: c.completionTokens,
    msPerToken: round(x, 2),
    baselineMedianMsPerToken: round(base.medianMsPerToken, 2),
    baselineMadMsPerToken: round(base.madMsPerToken, 2),
    limitMsPerToken: round(limit, 2),
    expectedMs: Math.round(expectedMs),
    samples: base.samples,
  };
}

/** Median and scaled MAD (x 1.4826, consistent with a standard deviation) of ms-per-token samples. */
export function latencyBaseline(
  samples: Array<{ latencyMs: number; completionTokens: number }>,
  tokenFloor: number,
): LatencyBaseline {
  const xs = samples.map((s) => msPerToken(s.latencyMs, s.completionTokens, tokenFloor)).sort((a, b) => a - b);
  const median = medianOf(xs);
  const mad = medianOf(xs.map((v) => Math.abs(v - median)).sort((a, b) => a - b)) * 1.4826;
  return { medianMsPerToken: median, madMsPerToken: mad, samples: xs.length };
}
function medianOf(sorted: number[]): number {
  if (sorted.length === 0) return 0;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Events with severity_number >= minSeverity (OpenTelemetry ERROR 17-20, FATAL 21-24). */
export function errorEvent(e: EventInput, r: DetectorConfig["error_event"]): Finding | null {
  if ((e.severityNumber ?? 0) < r.minSeverity) return null;
  return {
    detector: "error_event",
    fingerprint: fp("error_event", e.name),
    severity: (e.severityNumber ?? 0) >= r.criticalSeverity ? "critical" : "high",
    title: `Error event: ${e.name}`,
    traceId: e.traceId,
    spanId: null,
    occurredAt: e.timestamp,
    evidence: {
      itemId: eventItemId(e.id),
      name: e.name,
      severityNumber: e.severityNumber,
      attributes: e.attributes,
      body: e.body,
    },
  };
}

interface CallSeen {
  itemId: string;
  toolName: string | null;
  toolCallId: string | null;
  traceId: string | null;
  spanId: string | null;
  timestamp: string;
}

const callSeen = (i: TranscriptItem): CallSeen => ({
  itemId: i.id,
  toolName: (i.toolName as string | null) ?? null,
  toolCallId: (i.toolCallId as string | null) ?? null,
  traceId: i.traceId,
  spanId: i.spanId,
  timestamp: i.timestamp,
});

/**
 * `tool_call_unanswered` over the session: fed the tool calls as the transcript discovers them
 * (one small record each: ids, never the arguments), judged at the end against the answered ids.
 */
export class UnansweredCalls {
  private calls: CallSeen[] = [];

  add(i: TranscriptItem): void {
    if (i.type === "tool_call") this.calls.push(callSeen(i));
  }

  findings(answered: ReadonlySet<string>, impliedAnswered: ReadonlySet<string>): Finding[] {
    return [...this.calls]
      .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
      .filter((i) => i.toolCallId && !answered.has(i.toolCallId) && !impliedAnswered.has(i.toolCallId))
      .map((i) => ({
        detector: "tool_call_unanswered",
        fingerprint: fp("tool_call_unanswered", String(i.toolName)),
        severity: "medium",
        title: `Tool call never answered: ${i.toolName ?? "unknown tool"}`,
        traceId: i.traceId,
        spanId: i.spanId,
        occurredAt: new Date(i.timestamp),
        evidence: { itemId: i.itemId, toolName: i.toolName, toolCallId: i.toolCallId },
      }));
  }
}

/**
 * `tool_loop` over the session: the same tool with the same canonical arguments `repeats`+
 * times. Memory: per tool + arguments a count, a hash key, the first 500 characters of the
 * arguments and at most 20 call records.
 */
export class ToolLoops {
  private loops = new Map<string, { count: number; items: CallSeen[]; args: string }>();
  constructor(private readonly config: DetectorConfig["tool_loop"]) {}

  add(i: TranscriptItem): void {
    if (i.type !== "tool_call") return;
    const seen = callSeen(i);
    const args = canonicalArgs(i.content);
    const key = stableId(String(seen.toolName), args);
    const group = this.loops.get(key) ?? { count: 0, items: [], args: args.slice(0, 500) };
    group.count++;
    if (group.items.length < 20) group.items.push(seen);
    this.loops.set(key, group);
  }

  findings(): Finding[] {
    const out: Finding[] = [];
    const repeats = Math.max(2, Math.round(this.config.repeats));
    for (const g of this.loops.values()) {
      if (g.count < repeats) continue;
      const items = [...g.items].sort((a, b) => a.timestamp.localeCompare(b.timestamp));
      const at = items[Math.min(repeats, items.length) - 1];
      out.push({
        detector: "tool_loop",
        fingerprint: fp("tool_loop", String(at.toolName)),
        severity: "medium",
        title: `Tool loop: ${at.toolName ?? "unknown tool"} called repeatedly with the same arguments`,
        traceId: at.traceId,
        spanId: at.spanId,
        occurredAt: new Date(at.timestamp),
        evidence: {
          itemId: at.itemId,
          toolName: at.toolName,
          arguments: g.args,
          count: g.count,
          itemIds: items.map((i) => i.itemId),
        },
      });
    }
    return out;
  }
}
