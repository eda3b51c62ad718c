/**
 * OpenAI model prices in USD per million tokens, versioned by date. Each entry says from when it
 * applies; a call is priced with the newest entry for its model whose `from` is not after the
 * call. Reasoning tokens are part of `completion_tokens` and billed as output. `cachedInput`
 * null = the model has no cached-input discount (cached tokens billed as input).
 *
 * Source: OpenAI's published API pricing pages, as of PRICE_TABLE_VERSION. To change a price, add
 * an entry with a new `from` date (never edit an old one: old sessions keep their price) and bump
 * the version.
 */
export const PRICE_TABLE_VERSION = "2025-08-07";

export interface ModelPrice {
  model: string;
  /** ISO date from which this price applies. */
  from: string;
  input: number;
  cachedInput: number | null;
  output: number;
  /** Context window in tokens (for the "prompt near the context window" detector). */
  contextWindow: number;
}

const p = (model: string, from: string, input: number, cachedInput: number | null, output: number, contextWindow: number): ModelPrice => ({ model, from, input, cachedInput, output, contextWindow });

export const OPENAI_PRICES: readonly ModelPrice[] = [
  p("gpt-5", "2025-08-07", 1.25, 0.125, 10, 400_000),
  p("gpt-5-mini", "2025-08-07", 0.25, 0.025, 2, 400_000),
  p("gpt-5-nano", "2025-08-07", 0.05, 0.005, 0.4, 400_000),
  p("gpt-4.1", "2025-04-14", 2, 0.5, 8, 1_047_576),
  p("gpt-4.1-mini", "2025-04-14", 0.4, 0.1, 1.6, 1_047_576),
  p("gpt-4.1-nano", "2025-04-14", 0.1, 0.025, 0.4, 1_047_576),
  p("gpt-4o", "2024-08-06", 2.5, 1.25, 10, 128_000),
  // The first gpt-4o snapshot kept its launch price.
  p("gpt-4o-2024-05-13", "2024-05-13", 5, null, 15, 128_000),
  p("gpt-4o-mini", "2024-07-18", 0.15, 0.075, 0.6, 128_000),
  p("o1", "2024-12-17", 15, 7.5, 60, 200_000),
  p("o1-mini", "2024-09-12", 1.1, 0.55, 4.4, 128_000),
  p("o3", "2025-04-16", 10, 2.5, 40, 200_000),
  p("o3", "2025-06-10", 2, 0.5, 8, 200_000),
  p("o3-mini", "2025-01-31", 1.1, 0.55, 4.4, 200_000),
  p("o4-mini", "2025-04-16", 1.1, 0.275, 4.4, 200_000),
  p("gpt-4-turbo", "2024-04-09", 10, null, 30, 128_000),
  p("gpt-4", "2023-03-14", 30, null, 60, 8_192),
  p("gpt-3.5-turbo", "2024-01-25", 0.5, null, 1.5, 16_385),
];

const byModel = new Map<string, ModelPrice[]>();
for (const entry of OPENAI_PRICES) {
  const list = byModel.get(entry.model) ?? [];
  list.push(entry);
  list.sort((a, b) => a.from.localeCompare(b.from));
  byModel.set(entry.model, list);
}

/** `gpt-4o-mini-2024-07-18` -> `gpt-4o-mini`; `gpt-4-0613` / `gpt-3.5-turbo-0125` -> base. */
const DATED_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{4})$/;

/** The price-table name a model string resolves to, or null when the table does not know it. */
export function canonicalModel(model: string | null | undefined): string | null {
  if (!model) return null;
  let name = model.trim().toLowerCase();
  if (name.startsWith("openai/")) name = name.slice("openai/".length);
  if (byModel.has(name)) return name;
  const base = name.replace(DATED_SUFFIX, "");
  if (base !== name && byModel.has(base)) return base;
  // Aliases like `gpt-4o-mini-latest` or `chatgpt-4o-latest` are not priced: guessing is worse than null.
  return null;
}

/** Price of a model at a time (default now), or null when unknown. */
export function priceFor(model: string | null | undefined, at: Date = new Date()): ModelPrice | null {
  const name = canonicalModel(model);
  if (!name) return null;
  const list = byModel.get(name)!;
  const day = at.toISOString().slice(0, 10);
  let chosen: ModelPrice | null = null;
  for (const entry of list) if (entry.from <= day) chosen = entry;
  // A call dated before the first known price (clock skew, backfill) uses the earliest entry.
  return chosen ?? list[0];
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** Cost in USD of one call, or null for an unknown model. Cached prompt tokens get the cached price. */
export function costOf(model: string | null | undefined, usage: TokenUsage, at?: Date): number | null {
  const price = priceFor(model, at);
  if (!price) return null;
  const cached = Math.min(Math.max(usage.cachedTokens, 0), usage.promptTokens);
  const uncached = usage.promptTokens - cached;
  const usd = (uncached * price.input + cached * (price.cachedInput ?? price.input) + usage.completionTokens * price.output) / 1_000_000;
  return roundUsd(usd);
}

/** Costs are summed from many calls: keep 10 decimals so sums stay exact enough. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
