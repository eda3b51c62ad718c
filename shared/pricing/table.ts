import table from "./prices.json" with { type: "json" };

/**
 * Model prices as data (prices.json: dated entries per provider and model, each with its source
 * and the date it was checked). A call is priced with the newest entry for its model whose
 * `from` is not after the call. To change a price, add an entry with a new `from` date (never edit
 * an old one: old sessions keep their price) and bump `version`.
 *
 * Usage is priced in one shape, OpenAI's: prompt tokens include cache reads and cache writes
 * (providers whose native count excludes them, Anthropic and Claude on Bedrock, are normalised at
 * ingestion: shared/otlp/usage.ts). Unknown models cost null, never a guess.
 */
export interface ModelPrice {
  provider: string;
  model: string;
  /** ISO date from which this price applies. */
  from: string;
  /** USD per million tokens. */
  input: number;
  /** Cache reads; null = no discount (billed as input). */
  cachedInput: number | null;
  /** Cache writes; null = billed as input. */
  cacheWrite: number | null;
  output: number;
  /** Reasoning (thinking) output tokens, when billed apart from other output; absent or null = as output. */
  reasoningOutput?: number | null;
  /** Audio input tokens (not cached); absent or null = as input. Cached audio is billed as cached input. */
  audioInput?: number | null;
  /** Audio output tokens; absent or null = as output. */
  audioOutput?: number | null;
  /** Context window in tokens (for the "prompt near the context window" detector). */
  contextWindow: number;
  source: string;
  checked: string;
}

export const PRICE_TABLE_VERSION: string = table.version;
export const PRICES: readonly ModelPrice[] = table.prices as ModelPrice[];

/** `gpt-4o-mini-2024-07-18` -> `gpt-4o-mini`; `gpt-4-0613` -> `gpt-4`; `claude-sonnet-4-20250514` -> `claude-sonnet-4`. */
const DATED_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/;
/** Mistral's `-latest` / `-2411` and Gemini's `-001` / `-preview-...` revisions. */
const REVISION_SUFFIX = /-(latest|\d{3,4}|preview(-[\w-]+)?|exp(-[\w-]+)?)$/;

/** Provider spellings folded: `openai/gpt-4o`, Bedrock's `us.anthropic.claude-...-v1:0`, Vertex's `claude-...@2025...`. */
function unprefixed(model: string): string {
  let name = model.trim().toLowerCase();
  name = name.replace(/^.*\/models\//, "").replace(/^(openai|anthropic|google|mistralai|mistral)\//, "");
  name = name
    .replace(/^(us|eu|apac|global|us-gov|jp|au|ca)\.(?=[a-z0-9]+\.)/, "")
    .replace(/^(anthropic|mistral|google|amazon|meta|cohere|ai21)\./, "");
  return name.replace(/-v\d+(:\d+)?$/, "").replace(/@.*$/, "");
}

export interface TokenUsage {
  /** All input tokens, cached ones included. */
  promptTokens: number;
  completionTokens: number;
  /** Cache reads (part of promptTokens). */
  cachedTokens: number;
  /** Cache writes (part of promptTokens). */
  cacheWriteTokens?: number;
  /** Audio input tokens (part of promptTokens; OpenAI's prompt_tokens_details.audio_tokens). */
  audioInputTokens?: number;
  /** Audio output tokens (part of completionTokens). */
  audioOutputTokens?: number;
  /** Reasoning tokens (part of completionTokens). */
  reasoningTokens?: number;
}

export interface PriceBook {
  /** The price-table name a model string resolves to, or null when the book does not know it. */
  canonicalModel(model: string | null | undefined): string | null;
  /** Price of a model at a time (default now), or null when unknown. */
  priceFor(model: string | null | undefined, at?: Date): ModelPrice | null;
  /** Cost in USD of one call, or null for an unknown model. */
  costOf(model: string | null | undefined, usage: TokenUsage, at?: Date): number | null;
}

/**
 * The built-in table plus a tenant's own entries (admin CLI `price set`). A model the tenant
 * priced is priced by the tenant's entries only (dated among themselves): a negotiated price or a
 * custom model replaces the public one rather than mixing with it.
 */
export function createPriceBook(own: readonly ModelPrice[] = []): PriceBook {
  const byModel = new Map<string, ModelPrice[]>();
  const ownModels = new Set(own.map((e) => e.model));
  for (const entry of [...PRICES.filter((e) => !ownModels.has(e.model)), ...own]) {
    const list = byModel.get(entry.model) ?? [];
    list.push(entry);
    list.sort((a, b) => a.from.localeCompare(b.from));
    byModel.set(entry.model, list);
  }
  const canonicalModel = (model: string | null | undefined): string | null => {
    if (!model) return null;
    const raw = model.trim().toLowerCase();
    if (byModel.has(raw)) return raw;
    let name = unprefixed(model);
    for (let i = 0; i < 3; i++) {
      if (byModel.has(name)) return name;
      const shorter = name.replace(DATED_SUFFIX, "").replace(REVISION_SUFFIX, "");
      if (shorter === name) break;
      name = shorter;
    }
    // Aliases like `chatgpt-4o-latest` are not priced: guessing is worse than null.
    return byModel.has(name) ? name : null;
  };
  const priceFor = (model: string | null | undefined, at: Date = new Date()): ModelPrice | null => {
    const name = canonicalModel(model);
    if (!name) return null;
    const list = byModel.get(name)!;
    const day = at.toISOString().slice(0, 10);
    let chosen: ModelPrice | null = null;
    for (const entry of list) if (entry.from <= day) chosen = entry;
    // A call dated before the first known price (clock skew, backfill) uses the earliest entry.
    return chosen ?? list[0];
  };
  const costOf = (model: string | null | undefined, usage: TokenUsage, at?: Date): number | null => {
    const price = priceFor(model, at);
    if (!price) return null;
    const part = (n: number | undefined, of: number) => Math.min(Math.max(n ?? 0, 0), of);
    const cached = part(usage.cachedTokens, usage.promptTokens);
    const written = part(usage.cacheWriteTokens, usage.promptTokens - cached);
    // Audio and reasoning are parts of the prompt and completion counts, priced apart only where the entry has a rate.
    const audioIn = price.audioInput != null ? part(usage.audioInputTokens, usage.promptTokens - cached - written) : 0;
    const audioOut = price.audioOutput != null ? part(usage.audioOutputTokens, usage.completionTokens) : 0;
    const reasoning =
      price.reasoningOutput != null ? part(usage.reasoningTokens, usage.completionTokens - audioOut) : 0;
    const uncached = usage.promptTokens - cached - written - audioIn;
    const usd =
      (uncached * price.input +
        cached * (price.cachedInput ?? price.input) +
        written * (price.cacheWrite ?? price.input) +
        audioIn * (price.audioInput ?? 0) +
        (usage.completionTokens - audioOut - reasoning) * price.output +
        audioOut * (price.audioOutput ?? 0) +
        reasoning * (price.reasoningOutput ?? 0)) /
      1_000_000;
    return roundUsd(usd);
  };
  return { canonicalModel, priceFor, costOf };
}

/** The built-in table alone. */
export const DEFAULT_PRICE_BOOK = createPriceBook();
export const canonicalModel = DEFAULT_PRICE_BOOK.canonicalModel;
export const priceFor = DEFAULT_PRICE_BOOK.priceFor;
export const costOf = DEFAULT_PRICE_BOOK.costOf;

/** Costs are summed from many calls: keep 10 decimals so sums stay exact enough. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
