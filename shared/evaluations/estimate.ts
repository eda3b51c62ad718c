import type { PriceBook } from "../pricing/table.ts";
import type { EvalContext } from "./context.ts";
import type { EvaluatorDefinition } from "./definition.ts";
import { buildPrompt } from "./prompt.ts";

/** Characters per token assumed by the estimate (English text averages about four). */
export const CHARS_PER_TOKEN = 4;
/** Output tokens assumed per judgement: a score and a sentence or two of reason, capped by max_tokens. */
export const ESTIMATED_OUTPUT_TOKENS = 150;

/**
 * What judging these entities would cost (docs/evaluations.md, "Runs"), before any call: the
 * prompt each would get, in tokens at CHARS_PER_TOKEN, plus ESTIMATED_OUTPUT_TOKENS each, priced
 * with the tenant's book. A check costs 0; a model the book does not know gives null.
 */
export function estimateCost(
  d: EvaluatorDefinition,
  contexts: EvalContext[],
  book: PriceBook,
): { usd: number | null; inputTokens: number; outputTokens: number } {
  if (!d.judge) return { usd: 0, inputTokens: 0, outputTokens: 0 };
  let inputTokens = 0;
  for (const ctx of contexts) {
    const p = buildPrompt(d.judge.prompt, ctx, d.output);
    inputTokens += Math.ceil((p.system.length + p.user.length) / CHARS_PER_TOKEN);
  }
  const outputTokens = contexts.length * Math.min(ESTIMATED_OUTPUT_TOKENS, d.judge.max_tokens ?? 512);
  const usd = book.costOf(d.judge.model, {
    promptTokens: inputTokens,
    completionTokens: outputTokens,
    cachedTokens: 0,
  });
  return { usd, inputTokens, outputTokens };
}
