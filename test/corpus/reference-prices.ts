/**
 * The corpus reference's own price list and arithmetic (session-writer.ts), kept apart from
 * shared/pricing/ on purpose: a wrong entry or formula there must show up as a cost mismatch.
 */
/** USD per 1M tokens (input, cached input, cache write, output) for the models the corpus uses; checked by hand against the providers' price pages. */
export const REFERENCE_PRICES: Record<
  string,
  { input: number; cached: number; write?: number; output: number; contextWindow: number }
> = {
  "gpt-4o-mini": { input: 0.15, cached: 0.075, output: 0.6, contextWindow: 128_000 },
  "gpt-4o": { input: 2.5, cached: 1.25, output: 10, contextWindow: 128_000 },
  "o3-mini": { input: 1.1, cached: 0.55, output: 4.4, contextWindow: 200_000 },
  "gpt-4.1-mini": { input: 0.4, cached: 0.1, output: 1.6, contextWindow: 1_047_576 },
  "claude-haiku-4-5": { input: 1, cached: 0.1, write: 1.25, output: 5, contextWindow: 200_000 },
  "claude-sonnet-4-5": { input: 3, cached: 0.3, write: 3.75, output: 15, contextWindow: 200_000 },
  "nova-pro": { input: 0.8, cached: 0.2, output: 3.2, contextWindow: 300_000 },
  "llama3-3-70b-instruct": { input: 0.72, cached: 0.72, output: 0.72, contextWindow: 128_000 },
  "gemini-2.5-flash": { input: 0.3, cached: 0.03, output: 2.5, contextWindow: 1_048_576 },
  "mistral-small": { input: 0.1, cached: 0.1, output: 0.3, contextWindow: 128_000 },
};

export function referenceCost(
  model: string,
  prompt: number,
  completion: number,
  cached: number,
  written = 0,
): number | null {
  const p = REFERENCE_PRICES[model];
  if (!p) return null;
  return (
    ((prompt - cached - written) * p.input +
      cached * p.cached +
      written * (p.write ?? p.input) +
      completion * p.output) /
    1_000_000
  );
}
