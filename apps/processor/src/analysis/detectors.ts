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

/** Per-call detectors: each sees one call and the service's config and norms. */
export function callFindings(c: ModelCall, config: DetectorConfig, norms: LatencyNorms | undefined): Finding[] {
  const out: Finding[] = [];
  const stop = stopClass(c.finishReason);
  if (stop === "length" && config.response_cut_off.enabled) {
    out.push(
      callFinding(c, "response_cut_off", "medium", `Response cut off at the token limit (${modelKey(c)})`, {
        finishReason: c.finishReason,
        completionTokens: c.completionTokens,
      }),
    );
  } else if (stop === "content_filter" && config.content_filtered.enabled) {
    out.push(
      callFinding(c, "content_filtered", "high", `Response blocked by the content filter (${modelKey(c)})`, {
        finishReason: c.finishReason,
      }),
    );
  }
  if (
    config.empty_response.enabled &&
    c.hasMessage &&
    stop !== "length" &&
    stop !== "content_filter" &&
    stop !== "refusal" &&
    c.toolCalls.length === 0 &&
    c.textHead.trim() === "" &&
    !c.refusal &&
    !c.nonTextContent
  ) {
    out.push(
      callFinding(c, "empty_response", "medium", `Empty assistant response (${modelKey(c)})`, {
        finishReason: c.finishReason,
        completionTokens: c.completionTokens,
      }),
    );
  }
  if (config.refusal.enabled) {
    const verdict = isRefusal(c, config.refusal.maxChars);
    if (verdict) out.push(callFinding(c, "refusal", "low", `Model refused (${modelKey(c)})`, verdict));
  }
  if (config.latency_outlier.enabled) {
    const hit = latencyOutlier(c, config.latency_outlier, norms?.get(modelKey(c)));
    if (hit)
      out.push(callFinding(c, "latency_outlier", "medium", `Latency far above the service norm (${modelKey(c)})`, hit));
  }
  if (config.context_window_near.enabled) {
    // From the tenant's price book (calls.ts), else the built-in table.
    const window = c.contextWindow ?? priceFor(c.pricedModel, c.at)?.contextWindow;
    if (window && c.promptTokens >= config.context_window_near.share * window) {
      out.push(
        callFinding(c, "context_window_near", "medium", `Prompt near the context window (${modelKey(c)})`, {
          promptTokens: c.promptTokens,
          contextWindow: window,
          share: Math.round((c.promptTokens / window) * 1000) / 1000,
        }),
      );
    }
  }
  return out;
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
export function eventFinding(e: EventInput, config: DetectorConfig): Finding | null {
  const r = config.error_event;
  if (!r.enabled || (e.severityNumber ?? 0) < r.minSeverity) return null;
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

/**
 * Session-wide detectors over the transcript's tool calls (unanswered calls, loops). Fed the
 * tool calls as the transcript discovers them; memory is one small record per tool call (ids and
 * a hash of the arguments), never the arguments themselves.
 */
export class ToolCallDetectors {
  private calls: CallSeen[] = [];
  private loops = new Map<string, { count: number; items: CallSeen[]; args: string }>();

  add(i: TranscriptItem): void {
    if (i.type !== "tool_call") return;
    const seen: CallSeen = {
      itemId: i.id,
      toolName: (i.toolName as string | null) ?? null,
      toolCallId: (i.toolCallId as string | null) ?? null,
      traceId: i.traceId,
      spanId: i.spanId,
      timestamp: i.timestamp,
    };
    this.calls.push(seen);
    const args = canonicalArgs(i.content);
    const key = stableId(String(seen.toolName), args);
    const group = this.loops.get(key) ?? { count: 0, items: [], args: args.slice(0, 500) };
    group.count++;
    if (group.items.length < 20) group.items.push(seen);
    this.loops.set(key, group);
  }

  findings(config: DetectorConfig, answered: ReadonlySet<string>, impliedAnswered: ReadonlySet<string>): Finding[] {
    const out: Finding[] = [];
    const ordered = [...this.calls].sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    if (config.tool_call_unanswered.enabled) {
      for (const i of ordered) {
        if (!i.toolCallId || answered.has(i.toolCallId) || impliedAnswered.has(i.toolCallId)) continue;
        out.push({
          detector: "tool_call_unanswered",
          fingerprint: fp("tool_call_unanswered", String(i.toolName)),
          severity: "medium",
          title: `Tool call never answered: ${i.toolName ?? "unknown tool"}`,
          traceId: i.traceId,
          spanId: i.spanId,
          occurredAt: new Date(i.timestamp),
          evidence: { itemId: i.itemId, toolName: i.toolName, toolCallId: i.toolCallId },
        });
      }
    }
    if (config.tool_loop.enabled) {
      const repeats = Math.max(2, Math.round(config.tool_loop.repeats));
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
    }
    return out;
  }
}
