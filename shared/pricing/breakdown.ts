import { type CostLine, type PriceBook, type PriceEntryRef, type Quote, roundUsd, type TokenUsage } from "./table.ts";

/**
 * A stored trace's cost, call by call, as the price book sees it (docs/pricing.md, "Cost
 * breakdown"): what the processor sums into a session's cost and what the platform reads back on
 * a trace. Pure: the stored payload (OpenAI's usage shape, shared/otlp/usage.ts) and a book come in.
 */
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** The usage fields Cellar stores, as the price book reads them. */
export function tokenUsageOf(usage: any): TokenUsage {
  const p = usage?.prompt_tokens_details ?? {};
  const c = usage?.completion_tokens_details ?? {};
  return {
    promptTokens: num(usage?.prompt_tokens),
    completionTokens: num(usage?.completion_tokens),
    cachedTokens: num(p.cached_tokens),
    cacheWriteTokens: num(p.cache_creation_tokens),
    // Anthropic's cache_creation.ephemeral_1h_input_tokens, stored under Cellar's own name.
    cacheWrite1hTokens: num(p.cache_creation_1h_tokens),
    audioInputTokens: num(p.audio_tokens),
    imageInputTokens: num(p.image_tokens),
    audioOutputTokens: num(c.audio_tokens),
    reasoningTokens: num(c.reasoning_tokens),
  };
}

const TIER_ATTRIBUTES = [
  "openai.response.service_tier",
  "gen_ai.openai.response.service_tier",
  "openai.request.service_tier",
  "gen_ai.openai.request.service_tier",
];

/**
 * The fields of a payload pricing reads beside the responses (provider, service tier), for a
 * reduced copy of the payload (the processor's trace contribution) to keep; absent ones are left out.
 */
export function pricingFields(payload: Record<string, any>): {
  request: { service_tier?: unknown };
  rest: { provider?: unknown; otel?: { attributes: Record<string, unknown> } };
} {
  const attrs = payload?.otel?.attributes ?? {};
  const kept: Record<string, unknown> = {};
  for (const k of TIER_ATTRIBUTES) if (attrs[k] !== undefined) kept[k] = attrs[k];
  return {
    request: payload?.request?.service_tier !== undefined ? { service_tier: payload.request.service_tier } : {},
    rest: {
      ...(payload?.provider !== undefined ? { provider: payload.provider } : {}),
      ...(Object.keys(kept).length ? { otel: { attributes: kept } } : {}),
    },
  };
}

/** The tier the response says was used, else the request's (OpenAI `service_tier`; OTLP attributes). */
export function serviceTierOf(payload: Record<string, any>, response: any): string | null {
  const attrs = payload?.otel?.attributes ?? {};
  for (const v of [
    response?.service_tier,
    response?.usage?.service_tier,
    attrs["openai.response.service_tier"],
    attrs["gen_ai.openai.response.service_tier"],
    payload?.request?.service_tier,
    attrs["openai.request.service_tier"],
    attrs["gen_ai.openai.request.service_tier"],
  ])
    if (typeof v === "string" && v) return v;
  return null;
}

const modelOf = (payload: Record<string, any>, response: any): string | null =>
  typeof response?.model === "string"
    ? response.model
    : typeof payload?.request?.model === "string"
      ? payload.request.model
      : null;

/**
 * One response's quote. `model`: the name to price (the processor prices the response's model
 * when the book knows it, else the request's); by default the same choice is made here.
 */
export function quoteResponse(
  book: PriceBook,
  payload: Record<string, any>,
  response: any,
  at: Date,
  model?: string | null,
): Quote {
  const provider = typeof payload?.provider === "string" ? payload.provider : null;
  let name = model;
  if (name === undefined) {
    name = modelOf(payload, response);
    if (!book.canonicalModel(name, provider))
      name = typeof payload?.request?.model === "string" ? payload.request.model : name;
  }
  return book.quote(name, tokenUsageOf(response?.usage), at, {
    provider,
    serviceTier: serviceTierOf(payload, response),
  });
}

/** The processor's per-call fields. */
export function costOfResponse(
  book: PriceBook,
  payload: Record<string, any>,
  response: any,
  model: string | null,
  at: Date,
): { costUsd: number | null; costReason: string | null } {
  const q = quoteResponse(book, payload, response, at, model);
  return { costUsd: q.costUsd, costReason: q.reason };
}

export interface CallCost {
  /** Index of the response in the trace. */
  index: number;
  model: string | null;
  costUsd: number | null;
  /** Why the call is unpriced, else null. */
  reason: string | null;
  entry: PriceEntryRef | null;
  serviceTier: string | null;
  lines: CostLine[];
}

export interface TraceCost {
  /** The sum of the calls' lines; null when any call is unpriced. */
  totalUsd: number | null;
  unpricedCalls: number;
  calls: CallCost[];
}

/** A stored trace's cost, call by call (responses are spread evenly over the trace's time, as calls.ts does). */
export function traceCost(book: PriceBook, payload: Record<string, any>, start: Date, end: Date): TraceCost {
  const responses: any[] = Array.isArray(payload?.responses) ? payload.responses : [];
  const step = (end.getTime() - start.getTime()) / Math.max(1, responses.length);
  const calls = responses.map((r, index): CallCost => {
    const q = quoteResponse(book, payload, r, new Date(start.getTime() + step * index));
    return {
      index,
      model: modelOf(payload, r),
      costUsd: q.costUsd,
      reason: q.reason,
      entry: q.entry,
      serviceTier: q.serviceTier,
      lines: q.lines,
    };
  });
  const unpricedCalls = calls.filter((c) => c.costUsd === null).length;
  return {
    totalUsd: unpricedCalls ? null : roundUsd(calls.reduce((n, c) => n + c.costUsd!, 0)),
    unpricedCalls,
    calls,
  };
}
