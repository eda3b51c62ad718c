/**
 * A call's cost as lines (docs/pricing.md, "Cost breakdown"): each token kind with its count, its
 * unit price (USD per million tokens) and the tier that price comes from. Pure: a price record in
 * the database's shape (shared/pricing/source.ts: `input_mtok`, `cache_read_mtok`, ... each a
 * number or `{ base, tiers: [{ start, price }] }`, a tier applying when the prompt's tokens are
 * above its start) and the usage come in.
 *
 * A part of the prompt (cache reads and writes, audio, images) or of the completion (audio,
 * reasoning) is a line of its own only where the price has a rate for it; otherwise it stays in
 * its parent line, billed as plain input or output, as the providers bill it. 1-hour cache writes
 * without a 1-hour rate are the one exception: billing them at the 5-minute rate would be a wrong
 * price, so the call is left unpriced (`unpriced`).
 */
export type PriceRecord = Record<
  string,
  number | { base: number; tiers: Array<{ start: number; price: number }> } | undefined
>;

export interface TokenUsage {
  /** All input tokens, cached ones included. */
  promptTokens: number;
  completionTokens: number;
  /** Cache reads (part of promptTokens). */
  cachedTokens: number;
  /** Cache writes of any duration (part of promptTokens). */
  cacheWriteTokens?: number;
  /** 1-hour cache writes (part of cacheWriteTokens; Anthropic's cache_creation.ephemeral_1h_input_tokens). */
  cacheWrite1hTokens?: number;
  /** Audio input tokens (part of promptTokens). */
  audioInputTokens?: number;
  /** Image input tokens (part of promptTokens). */
  imageInputTokens?: number;
  /** Audio output tokens (part of completionTokens). */
  audioOutputTokens?: number;
  /** Reasoning tokens (part of completionTokens). */
  reasoningTokens?: number;
}

export type CostKind =
  | "input"
  | "cache_read"
  | "cache_write"
  | "cache_write_1h"
  | "input_audio"
  | "input_image"
  | "output"
  | "output_audio"
  | "output_reasoning";

export interface CostLine {
  kind: CostKind;
  tokens: number;
  /** USD per million tokens, after any service-tier factor. */
  usdPerMillion: number;
  usd: number;
  /** `prompt > 200000 tokens` when a long-context tier applies, else null (the base price). */
  tier: string | null;
}

const PRICE_KEY: Record<CostKind, string> = {
  input: "input_mtok",
  cache_read: "cache_read_mtok",
  cache_write: "cache_write_mtok",
  cache_write_1h: "cache_write_1h_mtok",
  input_audio: "input_audio_mtok",
  input_image: "input_image_mtok",
  output: "output_mtok",
  output_audio: "output_audio_mtok",
  output_reasoning: "output_reasoning_mtok",
};

/** Costs are summed from many calls: keep 10 decimals so sums stay exact enough. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}

const count = (n: number | undefined, of: number) =>
  Math.min(Math.max(Number.isFinite(n) ? n! : 0, 0), Math.max(of, 0));

export function costLines(
  price: PriceRecord,
  usage: TokenUsage,
  factor = 1,
): { lines: CostLine[]; unpriced: string | null } {
  const prompt = Math.max(usage.promptTokens || 0, 0);
  const completion = Math.max(usage.completionTokens || 0, 0);
  const has = (k: CostKind) => price[PRICE_KEY[k]] !== undefined;
  const lines: CostLine[] = [];
  const add = (kind: CostKind, tokens: number) => {
    if (tokens <= 0 && kind !== "input" && kind !== "output") return;
    const p = price[PRICE_KEY[kind]];
    let unit = 0;
    let tier: string | null = null;
    if (typeof p === "number") unit = p;
    else if (p) {
      unit = p.base;
      for (const t of [...p.tiers].sort((a, b) => a.start - b.start))
        if (prompt > t.start) {
          unit = t.price;
          tier = `prompt > ${t.start} tokens`;
        }
    }
    unit *= factor;
    lines.push({ kind, tokens, usdPerMillion: roundUsd(unit), usd: roundUsd((tokens * unit) / 1e6), tier });
  };
  let rest = prompt;
  const part = (kind: CostKind, n: number | undefined) => {
    const tokens = count(n, rest);
    if (!has(kind) || tokens === 0) return 0;
    rest -= tokens;
    return tokens;
  };
  const read = part("cache_read", usage.cachedTokens);
  const written = count(usage.cacheWriteTokens, rest);
  const hour = count(usage.cacheWrite1hTokens, written);
  if (hour > 0 && !has("cache_write_1h"))
    return { lines: [], unpriced: "1-hour cache writes: the price entry has no 1-hour cache-write rate" };
  const hourTokens = hour > 0 ? part("cache_write_1h", hour) : 0;
  const writeTokens = part("cache_write", written - hourTokens);
  const audioIn = part("input_audio", usage.audioInputTokens);
  const imageIn = part("input_image", usage.imageInputTokens);
  add("input", rest);
  if (read) add("cache_read", read);
  if (writeTokens) add("cache_write", writeTokens);
  if (hourTokens) add("cache_write_1h", hourTokens);
  if (audioIn) add("input_audio", audioIn);
  if (imageIn) add("input_image", imageIn);
  rest = completion;
  const audioOut = part("output_audio", usage.audioOutputTokens);
  const reasoning = part("output_reasoning", usage.reasoningTokens);
  add("output", rest);
  if (audioOut) add("output_audio", audioOut);
  if (reasoning) add("output_reasoning", reasoning);
  return { lines, unpriced: null };
}
