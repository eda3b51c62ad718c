import { PRICE_TABLE_VERSION, roundUsd } from "@cellar/shared/pricing/table";
import type { ModelCall } from "./calls.ts";

export interface CostByModel {
  model: string;
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  costUsd: number | null;
  priced: boolean;
  note: string | null;
  /** Calls of this model left unpriced (docs/pricing.md). */
  unpricedCalls: number;
}

export interface ToolCost {
  toolName: string;
  calls: number;
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number | null;
}

/** Nearest-rank percentile of an unsorted list (0 for an empty list). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Sum of costs, or null as soon as one is unknown (a partial sum would understate). */
function sumCost(values: Array<number | null>): number | null {
  let total = 0;
  for (const v of values) {
    if (v === null) return null;
    total += v;
  }
  return roundUsd(total);
}

export function callMetrics(calls: ModelCall[]) {
  const sum = (f: (c: ModelCall) => number) => calls.reduce((acc, c) => acc + f(c), 0);
  const latencies = calls.map((c) => c.latencyMs);
  const finishReasons: Record<string, number> = {};
  for (const c of calls) {
    const key = c.finishReason ?? "none";
    finishReasons[key] = (finishReasons[key] ?? 0) + 1;
  }
  const unpricedCalls: Record<string, number> = {};
  for (const c of calls)
    if (c.costUsd === null) unpricedCalls[c.model ?? "unknown"] = (unpricedCalls[c.model ?? "unknown"] ?? 0) + 1;
  const unpriced = Object.keys(unpricedCalls);
  return {
    modelCalls: calls.length,
    toolCalls: sum((c) => c.toolCalls.length),
    promptTokens: sum((c) => c.promptTokens),
    completionTokens: sum((c) => c.completionTokens),
    totalTokens: sum((c) => c.totalTokens),
    cachedTokens: sum((c) => c.cachedTokens),
    reasoningTokens: sum((c) => c.reasoningTokens),
    latencyP50Ms: percentile(latencies, 50),
    latencyP95Ms: percentile(latencies, 95),
    latencyMaxMs: latencies.length ? Math.max(...latencies) : 0,
    costUsd: sumCost(calls.map((c) => c.costUsd)),
    costComplete: unpriced.length === 0,
    pricedCostUsd: roundUsd(calls.reduce((acc, c) => acc + (c.costUsd ?? 0), 0)),
    unpricedModels: unpriced,
    // Additive (docs/pricing.md): unpriced calls per model as called, only when there are some.
    ...(unpriced.length ? { unpricedCalls } : {}),
    finishReasons,
    models: [...new Set(calls.map((c) => c.pricedModel ?? c.model ?? "unknown"))],
    priceTableVersion: PRICE_TABLE_VERSION,
  };
}

/** Counts the transcript and events contribute (over the whole history, not only the kept items). */
export interface SessionCounts {
  turns: number;
  traces: number;
  events: number;
  toolResults: number;
  errors: number;
  problems: number;
}

export function sessionMetrics(
  calls: ModelCall[],
  counts: SessionCounts,
  span: { first: number; last: number } | null,
) {
  return {
    durationMs: span ? span.last - span.first : 0,
    turns: counts.turns,
    traces: counts.traces,
    events: counts.events,
    toolResults: counts.toolResults,
    errors: counts.errors,
    problems: counts.problems,
    ...callMetrics(calls),
  };
}

export function costByModel(calls: ModelCall[]): CostByModel[] {
  const groups = new Map<string, ModelCall[]>();
  for (const c of calls) {
    const key = c.pricedModel ?? c.model ?? "unknown";
    const list = groups.get(key);
    if (list) list.push(c);
    else groups.set(key, [c]); // not a copy per call: quadratic in a long session
  }
  return [...groups]
    .map(([model, list]) => {
      const cost = sumCost(list.map((c) => c.costUsd));
      const unpricedCall = list.find((c) => c.costUsd === null);
      return {
        model,
        calls: list.length,
        promptTokens: list.reduce((a, c) => a + c.promptTokens, 0),
        cachedTokens: list.reduce((a, c) => a + c.cachedTokens, 0),
        completionTokens: list.reduce((a, c) => a + c.completionTokens, 0),
        reasoningTokens: list.reduce((a, c) => a + c.reasoningTokens, 0),
        totalTokens: list.reduce((a, c) => a + c.totalTokens, 0),
        costUsd: cost,
        priced: cost !== null,
        // The price book's reason (unknown model, unpriced tier...), with the price data's version.
        note: unpricedCall
          ? `${unpricedCall.costReason ?? `unknown model ${JSON.stringify(model)}`}; prices ${PRICE_TABLE_VERSION}, cost not computed`
          : null,
        unpricedCalls: list.filter((c) => c.costUsd === null).length,
      };
    })
    .sort((a, b) => (b.costUsd ?? -1) - (a.costUsd ?? -1) || a.model.localeCompare(b.model));
}

/**
 * Tokens and cost of the calls that requested or consumed tool calls. A call is attributed to
 * every distinct tool it requested or consumed, split evenly among them.
 */
export function toolCosts(calls: ModelCall[]): ToolCost[] {
  const out = new Map<string, ToolCost & { unknownCost: boolean }>();
  const entry = (name: string) => {
    let e = out.get(name);
    if (!e)
      out.set(
        name,
        (e = {
          toolName: name,
          calls: 0,
          modelCalls: 0,
          promptTokens: 0,
          completionTokens: 0,
          totalTokens: 0,
          costUsd: 0,
          unknownCost: false,
        }),
      );
    return e;
  };
  for (const c of calls) {
    for (const tc of c.toolCalls) entry(tc.name ?? "unknown").calls++;
    const tools = [...new Set([...c.toolCalls.map((t) => t.name ?? "unknown"), ...c.consumedTools])];
    if (tools.length === 0) continue;
    const share = 1 / tools.length;
    for (const name of tools) {
      const e = entry(name);
      e.modelCalls++;
      e.promptTokens += c.promptTokens * share;
      e.completionTokens += c.completionTokens * share;
      e.totalTokens += c.totalTokens * share;
      if (c.costUsd === null) e.unknownCost = true;
      else e.costUsd = (e.costUsd ?? 0) + c.costUsd * share;
    }
  }
  return [...out.values()]
    .map(({ unknownCost, ...e }) => ({
      ...e,
      promptTokens: Math.round(e.promptTokens),
      completionTokens: Math.round(e.completionTokens),
      totalTokens: Math.round(e.totalTokens),
      costUsd: unknownCost ? null : roundUsd(e.costUsd ?? 0),
    }))
    .sort((a, b) => b.totalTokens - a.totalTokens || a.toolName.localeCompare(b.toolName));
}
