import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OpenAIInstrumentation } from "@opentelemetry/instrumentation-openai";
import { OpenAIInstrumentation as TraceloopOpenAIInstrumentation } from "@traceloop/instrumentation-openai";
import { AnthropicInstrumentation as TraceloopAnthropicInstrumentation } from "@traceloop/instrumentation-anthropic";
import { OpenAIInstrumentation as OpenInferenceOpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { decodeTraces, type OtlpSpan } from "@cellar/shared/otlp/decode";
import { mapSpans } from "@cellar/shared/otlp/map";
import { testSpan } from "@cellar/shared/otlp/test-span";
import { INSTRUMENTATION_TOKENS, inputTokenReading, versionAtMost } from "@cellar/shared/otlp/usage";

/**
 * Token semantics by instrumentation (docs/otlp.md, "Tokens"): the instrumentations that run here
 * are run for real (their spans serialised to OTLP protobuf, decoded and mapped as ingest does),
 * over answers whose usage has cache reads (and, for Anthropic, cache writes). The others are
 * tested with spans recorded in the shape their source writes.
 */
const require = createRequire(import.meta.url);
const otelOpenAI = new OpenAIInstrumentation({ enabled: false });
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": "tokens" }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
const msw = setupServer(
  http.post("https://api.openai.com/v1/chat/completions", () =>
    HttpResponse.json({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_760_000_000,
      model: "gpt-4o-mini-2024-07-18",
      choices: [{ index: 0, message: { role: "assistant", content: "Hi.", refusal: null }, finish_reason: "stop" }],
      // OpenAI: prompt_tokens includes the 3,000 cached.
      usage: {
        prompt_tokens: 5_000,
        completion_tokens: 7,
        total_tokens: 5_007,
        prompt_tokens_details: { cached_tokens: 3_000 },
      },
    }),
  ),
  http.post("https://api.anthropic.com/v1/messages", () =>
    HttpResponse.json({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5-20251001",
      content: [{ type: "text", text: "Hi." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      // Anthropic: input_tokens leaves out the 3,000 read and the 500 written.
      usage: {
        input_tokens: 1_500,
        output_tokens: 7,
        cache_read_input_tokens: 3_000,
        cache_creation_input_tokens: 500,
      },
    }),
  ),
);

/** What ingest makes of the spans the instrumentation exported: the usage of each model call, by scope. */
function mappedUsage(): Map<string, any> {
  const spans = exporter.getFinishedSpans();
  exporter.reset();
  const bytes = ProtobufTraceSerializer.serializeRequest(spans as any)!;
  const decoded: OtlpSpan[] = decodeTraces(bytes, "protobuf");
  const out = new Map<string, any>();
  for (const s of decoded) {
    const mapped = mapSpans([s]).accepted[0] as any;
    if (mapped?.payload?.responses) out.set(String(s.scope.name), mapped.payload.responses[0].usage);
  }
  return out;
}

beforeAll(() => {
  msw.listen({ onUnhandledRequest: "error" });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(async () => {
  msw.close();
  context.disable();
  await provider.shutdown();
});

describe("instrumentations that run here", () => {
  test("openai: @opentelemetry/instrumentation-openai, @traceloop/instrumentation-openai and OpenInference count the cache inside the input", async () => {
    // One at a time: an instrumentation that wraps an already wrapped method unwraps it first.
    const ask = async (openai: any) =>
      new openai.OpenAI({ apiKey: "sk-test" }).chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "Hi" }],
      });
    otelOpenAI.setTracerProvider(provider);
    otelOpenAI.enable(); // patches openai as it loads (require hook)
    // Another test file of the same run may have loaded (and wrapped) openai already: load a fresh
    // copy, so each instrumentation wraps the real methods.
    for (const key of Object.keys(require.cache))
      if (/[\\/]node_modules[\\/]openai[\\/]/.test(key)) delete require.cache[key];
    const openai = require("openai");
    if (!(openai.OpenAI.Chat.Completions.prototype.create as { __wrapped?: boolean }).__wrapped)
      otelOpenAI.getModuleDefinitions()[0].patch?.(openai, require("openai/package.json").version);
    try {
      await ask(openai);
    } finally {
      otelOpenAI.disable();
    }
    const traceloop = new TraceloopOpenAIInstrumentation({ traceContent: true, enrichTokens: false });
    traceloop.setTracerProvider(provider);
    traceloop.manuallyInstrument(openai.OpenAI);
    try {
      await ask(openai);
    } finally {
      traceloop.disable();
    }
    const openinference = new OpenInferenceOpenAIInstrumentation({ instrumentationConfig: { enabled: false } });
    openinference.setTracerProvider(provider);
    openinference.manuallyInstrument(openai);
    try {
      await ask(openai);
    } finally {
      openinference.disable();
    }
    const usage = mappedUsage();
    // Every one writes OpenAI's prompt_tokens (5,000, the cache included) as is.
    for (const scope of [
      "@opentelemetry/instrumentation-openai",
      "@traceloop/instrumentation-openai",
      "@arizeai/openinference-instrumentation-openai",
    ])
      expect([scope, usage.get(scope)?.prompt_tokens]).toEqual([scope, 5_000]);
    // OpenInference reports the cached part; the other two do not.
    expect(usage.get("@arizeai/openinference-instrumentation-openai").prompt_tokens_details).toEqual({
      cached_tokens: 3_000,
      cache_creation_tokens: 0,
    });
  });

  test("anthropic: @traceloop/instrumentation-anthropic up to 0.27.0 writes Anthropic's input_tokens (cache left out): the cache is added back", async () => {
    const anthropic = require("@anthropic-ai/sdk");
    const traceloop = new TraceloopAnthropicInstrumentation({ traceContent: true });
    traceloop.setTracerProvider(provider);
    traceloop.manuallyInstrument(anthropic);
    try {
      const client = new anthropic.Anthropic({ apiKey: "sk-ant-test" });
      await client.messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "Hi" }],
      });
    } finally {
      traceloop.disable();
    }
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.instrumentationScope.version)).toEqual([
      require("@traceloop/instrumentation-anthropic/package.json").version,
    ]);
    expect(spans[0].attributes["gen_ai.usage.input_tokens"]).toBe(1_500);
    const usage = mappedUsage().get("@traceloop/instrumentation-anthropic");
    expect(usage).toMatchObject({
      prompt_tokens: 5_000,
      prompt_tokens_details: { cached_tokens: 3_000, cache_creation_tokens: 500 },
    });
  });
});

describe("recorded spans of the instrumentations that cannot run here", () => {
  // Anthropic call: 1,500 new input tokens, 3,000 read from the cache, 500 written (5,000 in all).
  const anthropicSpan = (scope: string, version: string | null, attrs: Record<string, unknown>): OtlpSpan =>
    testSpan(
      { "gen_ai.request.model": "claude-haiku-4-5", "gen_ai.usage.output_tokens": 7, ...attrs },
      { scope: { name: scope, version } },
    );
  const promptOf = (s: OtlpSpan) => (mapSpans([s]).accepted[0] as any).payload.responses[0].usage.prompt_tokens;
  const cache = { "gen_ai.usage.cache_read.input_tokens": 3_000, "gen_ai.usage.cache_creation.input_tokens": 500 };
  const cases: Array<[string, string | null, Record<string, unknown>]> = [
    // OpenLLMetry JS after #1028 (later than 0.27.0): the conventions' sum.
    [
      "@traceloop/instrumentation-anthropic",
      "0.28.0",
      { "gen_ai.provider.name": "anthropic", "gen_ai.usage.input_tokens": 5_000, ...cache },
    ],
    // OpenLLMetry JS Bedrock up to 0.27.0: Claude's own input_tokens.
    [
      "@traceloop/instrumentation-bedrock",
      "0.27.0",
      { "gen_ai.system": "AWS", "gen_ai.usage.input_tokens": 1_500, ...cache },
    ],
    [
      "@traceloop/instrumentation-bedrock",
      "0.28.0",
      { "gen_ai.system": "AWS", "gen_ai.usage.input_tokens": 5_000, ...cache },
    ],
    // OpenLLMetry Python: anthropic sums (since 0.33.3), bedrock copies Bedrock's inputTokens.
    [
      "opentelemetry.instrumentation.anthropic",
      "0.62.1",
      {
        "gen_ai.system": "Anthropic",
        "gen_ai.usage.input_tokens": 5_000,
        "gen_ai.usage.cache_read_input_tokens": 3_000,
        "gen_ai.usage.cache_creation_input_tokens": 500,
      },
    ],
    [
      "opentelemetry.instrumentation.bedrock",
      "0.62.1",
      {
        "gen_ai.system": "AWS",
        "gen_ai.usage.input_tokens": 1_500,
        "gen_ai.usage.cache_read_input_tokens": 3_000,
        "gen_ai.usage.cache_creation_input_tokens": 500,
      },
    ],
    // OpenInference: JS Bedrock copies input_tokens with the cache details beside; Python sums.
    [
      "@arizeai/openinference-instrumentation-bedrock",
      "1.0.0",
      {
        "openinference.span.kind": "LLM",
        "llm.provider": "aws",
        "llm.model_name": "claude-haiku-4-5",
        "llm.token_count.prompt": 1_500,
        "llm.token_count.prompt_details.cache_read": 3_000,
        "llm.token_count.prompt_details.cache_write": 500,
      },
    ],
    [
      "openinference.instrumentation.anthropic",
      "0.1.20",
      {
        "openinference.span.kind": "LLM",
        "llm.provider": "anthropic",
        "llm.model_name": "claude-haiku-4-5",
        "llm.token_count.prompt": 5_000,
        "llm.token_count.prompt_details.cache_read": 3_000,
        "llm.token_count.prompt_details.cache_write": 500,
      },
    ],
    [
      "openinference.instrumentation.bedrock",
      "0.1.30",
      {
        "openinference.span.kind": "LLM",
        "llm.provider": "aws",
        "llm.model_name": "claude-haiku-4-5",
        "llm.token_count.prompt": 5_000,
        "llm.token_count.prompt_details.cache_read": 3_000,
        "llm.token_count.prompt_details.cache_write": 500,
      },
    ],
    // Vercel AI SDK 5 (scope "ai"): the provider's own count and ai.usage.cachedInputTokens.
    [
      "ai",
      null,
      {
        "gen_ai.system": "anthropic.messages",
        "gen_ai.usage.input_tokens": 3_500,
        "ai.usage.cachedInputTokens": 3_000,
      },
    ],
    // AI SDK 6+: the total, with the details beside it.
    [
      "ai",
      null,
      {
        "gen_ai.system": "anthropic.messages",
        "gen_ai.usage.input_tokens": 5_000,
        "ai.usage.inputTokenDetails.noCacheTokens": 1_500,
        "ai.usage.inputTokenDetails.cacheReadTokens": 3_000,
        "ai.usage.inputTokenDetails.cacheWriteTokens": 500,
      },
    ],
    ["gen_ai", null, { "gen_ai.provider.name": "anthropic", "gen_ai.usage.input_tokens": 5_000, ...cache }],
    // An instrumentation nobody listed: the conventions' rule.
    ["acme.genai", "1.0.0", { "gen_ai.provider.name": "anthropic", "gen_ai.usage.input_tokens": 5_000, ...cache }],
  ];
  for (const [scope, version, attrs] of cases)
    test(`${scope} ${version ?? ""}`, () => {
      // The AI SDK 5 case: 3,500 new (more than the cache, so only the scope can tell) + 3,000 read.
      const want = scope === "ai" && !("ai.usage.inputTokenDetails.noCacheTokens" in attrs) ? 6_500 : 5_000;
      expect(promptOf(anthropicSpan(scope, version, attrs))).toBe(want);
    });

  test("a count smaller than its cache part can only leave the cache out, whatever the scope says", () => {
    expect(
      promptOf(
        anthropicSpan("acme.genai", null, {
          "gen_ai.provider.name": "anthropic",
          "gen_ai.usage.input_tokens": 1_500,
          ...cache,
        }),
      ),
    ).toBe(5_000);
  });

  test("the table: versions compare numerically; every entry names its source", () => {
    expect(versionAtMost("0.27.0", "0.27.0")).toBe(true);
    expect(versionAtMost("0.9.9", "0.27.0")).toBe(true);
    expect(versionAtMost("0.27.1", "0.27.0")).toBe(false);
    expect(versionAtMost("1.0.0-beta.1", "0.27.0")).toBe(false);
    for (const e of INSTRUMENTATION_TOKENS) expect(e.source).toMatch(/^[\w-]+\/[\w.-]+ \S+/);
    expect(inputTokenReading({ name: "ai", version: null }, "openai", "gpt-4o", {}).includesCache).toBe(true);
    expect(inputTokenReading({ name: "ai", version: null }, "anthropic", "claude-sonnet-4", {}).includesCache).toBe(
      false,
    );
  });
});
