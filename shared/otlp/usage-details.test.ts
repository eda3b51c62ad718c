import { expect, test } from "bun:test";
import { ANTHROPIC_1H_USAGE } from "./test-usage.ts";
import { quoteResponse } from "../pricing/breakdown.ts";
import { DEFAULT_PRICE_BOOK } from "../pricing/table.ts";
import type { OtlpSpan } from "./decode.ts";
import { mapSpans } from "./map.ts";
import { testSpan } from "./test-span.ts";

// Spans as each instrumentation writes them (usage-details.ts names the sources), mapped to the
// stored payload and priced by the book: the rates that used to arrive only through the raw route.
const mapped = (s: OtlpSpan) => {
  const r = mapSpans([s]);
  expect(r.rejected).toBe(0);
  return r.accepted[0].payload as any;
};
const AT = new Date("2026-11-01T00:00:00Z");
const linesOf = (p: any) =>
  quoteResponse(DEFAULT_PRICE_BOOK, p, p.responses[0], AT).lines.map((l) => [l.kind, l.tokens, l.usdPerMillion]);

/** A Vercel AI SDK `ai.generateText.doGenerate` span (scope "ai", v5): its usage, and each provider's own report as JSON. */
const aiSdkSpan = (provider: string, model: string, attrs: Record<string, unknown>, metadata: unknown) =>
  testSpan(
    {
      "operation.name": "ai.generateText.doGenerate",
      "ai.operationId": "ai.generateText.doGenerate",
      "ai.model.provider": provider,
      "ai.model.id": model,
      "gen_ai.system": provider,
      "gen_ai.request.model": model,
      "gen_ai.response.model": model,
      "ai.response.providerMetadata": JSON.stringify(metadata),
      ...attrs,
    },
    { name: "ai.generateText.doGenerate", scope: { name: "ai", version: "5.0.60" } },
  );

test("Anthropic through the AI SDK: the 1-hour cache writes in its provider metadata are billed at the 1-hour rate", () => {
  const p = mapped(
    aiSdkSpan(
      "anthropic.messages",
      "claude-sonnet-4-5-20250929",
      {
        // What v5 writes (legacy-open-telemetry.ts): Anthropic's own input count, without the
        // cache (usage.ts adds it back), cache reads, and no cache writes but in the metadata.
        "ai.usage.inputTokens": 50_000,
        "ai.usage.outputTokens": 1_000,
        "ai.usage.totalTokens": 51_000,
        "ai.usage.cachedInputTokens": 20_000,
        "gen_ai.usage.input_tokens": 50_000,
        "gen_ai.usage.output_tokens": 1_000,
      },
      {
        anthropic: {
          usage: ANTHROPIC_1H_USAGE,
          cacheCreationInputTokens: 250_000,
          stopSequence: null,
        },
      },
    ),
  );
  expect(p.provider).toBe("anthropic");
  expect(p.responses[0].usage).toEqual({
    prompt_tokens: 320_000,
    completion_tokens: 1_000,
    total_tokens: 321_000,
    prompt_tokens_details: { cached_tokens: 20_000, cache_creation_tokens: 250_000, cache_creation_1h_tokens: 200_000 },
  });
  expect(linesOf(p)).toEqual([
    ["input", 50_000, 6],
    ["cache_read", 20_000, 0.6],
    ["cache_write", 50_000, 7.5],
    ["cache_write_1h", 200_000, 12],
    ["output", 1_000, 22.5],
  ]);
});

test("Gemini audio input: OpenInference's llm.token_count.prompt_details.audio, the conventions' gen_ai.usage.audio.input_tokens, the AI SDK's usageMetadata", () => {
  const openinference = mapped(
    testSpan(
      {
        "openinference.span.kind": "LLM",
        "llm.provider": "google",
        "llm.model_name": "gemini-2.5-flash",
        "llm.token_count.prompt": 2_000,
        "llm.token_count.completion": 100,
        "llm.token_count.total": 2_100,
        "llm.token_count.prompt_details.audio": 1_500,
      },
      { scope: { name: "openinference.instrumentation.google_genai", version: "0.1.5" } },
    ),
  );
  const conventions = mapped(
    testSpan({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "gcp.gemini",
      "gen_ai.request.model": "gemini-2.5-flash",
      "gen_ai.usage.input_tokens": 2_000,
      "gen_ai.usage.output_tokens": 100,
      "gen_ai.usage.audio.input_tokens": 1_500,
    }),
  );
  const aiSdk = mapped(
    aiSdkSpan(
      "google.generative-ai",
      "gemini-2.5-flash",
      { "gen_ai.usage.input_tokens": 2_000, "gen_ai.usage.output_tokens": 100 },
      {
        google: {
          usageMetadata: {
            promptTokenCount: 2_000,
            candidatesTokenCount: 100,
            promptTokensDetails: [
              { modality: "TEXT", tokenCount: 500 },
              { modality: "AUDIO", tokenCount: 1_500 },
            ],
          },
        },
      },
    ),
  );
  for (const p of [openinference, conventions, aiSdk]) {
    expect(p.responses[0].usage.prompt_tokens_details).toEqual({ audio_tokens: 1_500 });
    expect(linesOf(p)).toEqual([
      ["input", 500, 0.3],
      ["input_audio", 1_500, 1],
      ["output", 100, 2.5],
    ]);
  }
});

test("service tiers the response names: OpenAI flex through the AI SDK is priced at half; Bedrock flex and Vertex provisioned throughput are unpriced, with the tier named", () => {
  const flex = mapped(
    aiSdkSpan(
      "openai.responses",
      "gpt-5",
      { "gen_ai.usage.input_tokens": 2_000, "gen_ai.usage.output_tokens": 100 },
      { openai: { responseId: "resp_1", serviceTier: "flex" } },
    ),
  );
  expect(flex.responses[0].service_tier).toBe("flex");
  const q = quoteResponse(DEFAULT_PRICE_BOOK, flex, flex.responses[0], AT);
  expect([q.serviceTier, q.lines.map((l) => l.usdPerMillion)]).toEqual(["flex (x0.5)", [0.625, 5]]);

  const bedrock = mapped(
    aiSdkSpan(
      "amazon-bedrock",
      "us.amazon.nova-pro-v1:0",
      { "gen_ai.usage.input_tokens": 1_000, "gen_ai.usage.output_tokens": 100 },
      { bedrock: { serviceTier: { type: "flex" }, stopSequence: null } },
    ),
  );
  expect(bedrock.responses[0].service_tier).toBe("flex");
  const b = quoteResponse(DEFAULT_PRICE_BOOK, bedrock, bedrock.responses[0], AT);
  expect(b.costUsd).toBeNull();
  expect(b.reason).toStartWith('service tier "flex": no price for it (aws/');

  const vertex = mapped(
    aiSdkSpan(
      "google.vertex.chat",
      "gemini-2.5-flash",
      { "gen_ai.usage.input_tokens": 1_000, "gen_ai.usage.output_tokens": 100 },
      { vertex: { usageMetadata: { promptTokenCount: 1_000, trafficType: "PROVISIONED_THROUGHPUT" } } },
    ),
  );
  expect(vertex.responses[0].service_tier).toBe("provisioned_throughput");
  expect(quoteResponse(DEFAULT_PRICE_BOOK, vertex, vertex.responses[0], AT).reason).toStartWith(
    'service tier "provisioned_throughput": no price for it',
  );
  // On-demand traffic (Vertex's ON_DEMAND, Bedrock's default) is the standard price.
  const onDemand = mapped(
    aiSdkSpan(
      "google.vertex.chat",
      "gemini-2.5-flash",
      { "gen_ai.usage.input_tokens": 1_000, "gen_ai.usage.output_tokens": 100 },
      { vertex: { usageMetadata: { trafficType: "ON_DEMAND" } } },
    ),
  );
  expect(quoteResponse(DEFAULT_PRICE_BOOK, onDemand, onDemand.responses[0], AT).costUsd).toBeCloseTo(
    (1_000 * 0.3 + 100 * 2.5) / 1e6,
    12,
  );
});

test("Bedrock Converse's cacheDetails: 1-hour writes counted and billed at the 1-hour rate (2x input, overrides.json)", () => {
  const p = mapped(
    aiSdkSpan(
      "amazon-bedrock",
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      { "gen_ai.usage.input_tokens": 2_000, "gen_ai.usage.output_tokens": 100 },
      { bedrock: { usage: { cacheWriteInputTokens: 8_000, cacheDetails: [{ ttl: "1h", inputTokens: 8_000 }] } } },
    ),
  );
  // Bedrock's own input count leaves the cache out: the writes are added back.
  expect(p.responses[0].usage).toMatchObject({
    prompt_tokens: 10_000,
    prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 8_000, cache_creation_1h_tokens: 8_000 },
  });
  expect(linesOf(p)).toEqual([
    ["input", 2_000, 3.3],
    ["cache_write_1h", 8_000, 6.6],
    ["output", 100, 16.5],
  ]);
});

test("no provider metadata, malformed metadata, or counts absent: the usage is what it was", () => {
  const plain = mapped(
    testSpan({
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 5,
      "ai.response.providerMetadata": "{not json",
    }),
  );
  expect(plain.responses[0].usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  expect(plain.responses[0].service_tier).toBeUndefined();
});
