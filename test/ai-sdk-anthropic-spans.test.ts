import { expect, test } from "bun:test";
import recorded from "./fixtures/ai-sdk-spans/anthropic-cache.json";
import { mapSpans } from "@cellar/shared/otlp/map";
import { testSpan } from "@cellar/shared/otlp/test-span";
import { quoteResponse } from "@cellar/shared/pricing/breakdown";
import { DEFAULT_PRICE_BOOK } from "@cellar/shared/pricing/table";

/**
 * Spans recorded from the real Vercel AI SDK (test/fixtures/ai-sdk-spans/record.mjs: ai 5.0.277,
 * 6.0.118 and 6.0.326 with their @ai-sdk/anthropic), one generateText and one streamText call
 * against an Anthropic answer of 1,500 new input tokens, 3,000 read from the cache, 500 written
 * and 7 output. What each writes (the scope "ai" has no version in any of them):
 * - 5: `gen_ai.usage.input_tokens` 1,500 (Anthropic's own count); doStream adds
 *   `ai.usage.cachedInputTokens` 3,000, doGenerate no cache attribute at all; writes only in
 *   `ai.response.providerMetadata`.
 * - 6.0.118 (6.0.0-6.0.118): 5,000 (the total, cache included) with no `inputTokenDetails`;
 *   doGenerate no cache attribute, doStream `ai.usage.cachedInputTokens`.
 * - 6.0.326 (since 6.0.119): 5,000 with `ai.usage.inputTokenDetails.*` on both.
 * `ai.response.providerMetadata` (Anthropic's own usage) is on every call span, whatever recordOutputs
 * says (generate-text.ts / stream-text.ts write it outside the output attributes).
 * Each call must read as 5,000 in, 3,000 of them read and 500 written, priced once.
 */
interface Recorded {
  ai: string;
  "@ai-sdk/anthropic": string;
  spans: Array<{ name: string; scope: { name: string; version?: string }; attributes: Record<string, unknown> }>;
}
const recordings = (recorded as { recordings: Recorded[] }).recordings;
const AT = new Date("2026-11-01T00:00:00Z");

test("the fixture holds the three recordings, each with its two calls and their outer spans", () => {
  expect(recordings.map((r) => r.ai)).toEqual(["5.0.277", "6.0.118", "6.0.326"]);
  for (const r of recordings)
    expect(r.spans.map((s) => [s.name, s.scope.name, s.scope.version ?? null])).toEqual([
      ["ai.generateText.doGenerate", "ai", null],
      ["ai.generateText", "ai", null],
      ["ai.streamText.doStream", "ai", null],
      ["ai.streamText", "ai", null],
    ]);
  // The case this reading exists for: 6.0.118 writes the total with no details beside it.
  const early = recordings[1].spans[0].attributes;
  expect(early["gen_ai.usage.input_tokens"]).toBe(5_000);
  expect(Object.keys(early).some((k) => k.startsWith("ai.usage.inputTokenDetails."))).toBe(false);
  expect(recordings[0].spans[0].attributes["gen_ai.usage.input_tokens"]).toBe(1_500);
});

for (const r of recordings)
  test(`ai ${r.ai}: generateText and streamText each count Anthropic's cache once, and are priced once`, () => {
    const mapped = r.spans.map(
      (s) =>
        mapSpans([testSpan(s.attributes, { name: s.name, scope: { name: s.scope.name, version: null } })]).accepted,
    );
    // The outer spans (ai.generateText, ai.streamText) repeat the call's usage: they are not model calls.
    expect(mapped.map((m) => m.length)).toEqual([1, 0, 1, 0]);
    for (const [m] of [mapped[0], mapped[2]]) {
      const p = m.payload as any;
      expect(p.provider).toBe("anthropic");
      expect(p.responses[0].usage).toEqual({
        prompt_tokens: 5_000,
        completion_tokens: 7,
        total_tokens: 5_007,
        prompt_tokens_details: { cached_tokens: 3_000, cache_creation_tokens: 500 },
      });
      const q = quoteResponse(DEFAULT_PRICE_BOOK, p, p.responses[0], AT);
      // Claude Haiku 4.5: $1 in, $0.10 cache read, $1.25 cache write (5 minutes), $5 out, per million.
      expect(q.lines.map((l) => [l.kind, l.tokens, l.usdPerMillion])).toEqual([
        ["input", 1_500, 1],
        ["cache_read", 3_000, 0.1],
        ["cache_write", 500, 1.25],
        ["output", 7, 5],
      ]);
      expect(q.costUsd).toBeCloseTo((1_500 * 1 + 3_000 * 0.1 + 500 * 1.25 + 7 * 5) / 1e6, 12);
    }
  });
