import type { Attributes } from "./decode.ts";
import { firstInt, usageDetails } from "./usage-details.ts";

/**
 * Provider names as the conventions spell them (gen_ai.provider.name), from whatever an
 * instrumentation wrote: the old gen_ai.system values, OpenLLMetry's capitalised names, and
 * OpenInference's llm.provider / llm.system.
 */
const ALIASES: Record<string, string> = {
  openai: "openai",
  anthropic: "anthropic",
  "az.ai.openai": "azure.ai.openai",
  "azure.ai.openai": "azure.ai.openai",
  azure: "azure.ai.openai",
  "azure openai": "azure.ai.openai",
  azureopenai: "azure.ai.openai",
  "az.ai.inference": "azure.ai.inference",
  "azure.ai.inference": "azure.ai.inference",
  vertex_ai: "gcp.vertex_ai",
  vertexai: "gcp.vertex_ai",
  "gcp.vertex_ai": "gcp.vertex_ai",
  gemini: "gcp.gemini",
  "gcp.gemini": "gcp.gemini",
  google: "gcp.gemini",
  "gcp.gen_ai": "gcp.gen_ai",
  "aws.bedrock": "aws.bedrock",
  aws_bedrock: "aws.bedrock",
  bedrock: "aws.bedrock",
  aws: "aws.bedrock",
  mistral_ai: "mistral_ai",
  mistralai: "mistral_ai",
  mistral: "mistral_ai",
  cohere: "cohere",
  groq: "groq",
  deepseek: "deepseek",
  xai: "xai",
  perplexity: "perplexity",
  "ibm.watsonx.ai": "ibm.watsonx.ai",
};

/** The Vercel AI SDK's provider ids (`anthropic.messages`, `openai.chat`, `amazon-bedrock`, `google.vertex.chat`), by their first part. */
const AI_SDK_PROVIDERS: Record<string, string> = {
  anthropic: "anthropic",
  openai: "openai",
  "amazon-bedrock": "aws.bedrock",
  mistral: "mistral_ai",
  google: "gcp.gemini",
  "google-vertex": "gcp.vertex_ai",
  vertex: "gcp.vertex_ai",
  azure: "azure.ai.openai",
  cohere: "cohere",
  groq: "groq",
  xai: "xai",
  deepseek: "deepseek",
};

export function providerName(raw: unknown, model: string | null): string {
  const given = typeof raw === "string" ? raw.trim().toLowerCase() : "";
  if (given) return ALIASES[given] ?? AI_SDK_PROVIDERS[given.split(".")[0]] ?? given.slice(0, 64);
  // Bedrock ids: an optional cross-region prefix, then `vendor.model` (us.anthropic.claude-...).
  const m = (model ?? "").toLowerCase().replace(/^(us|eu|apac|global|us-gov)\.(?=[a-z0-9-]+\.)/, "");
  if (/^(anthropic|amazon|meta|cohere|ai21|mistral|deepseek|writer)\./.test(m)) return "aws.bedrock";
  if (m.startsWith("claude")) return "anthropic";
  if (m.startsWith("gemini")) return "gcp.gemini";
  if (/^(mistral|codestral|ministral|magistral|pixtral)/.test(m)) return "mistral_ai";
  return "openai";
}

/** How an instrumentation's input-token count treats the prompt cache. */
export type InputTokenReading =
  /** The conventions' rule: input tokens include cache reads and writes. */
  | "includes_cache"
  /** The count leaves both cache parts out (Anthropic's and Bedrock's own numbers, copied). */
  | "excludes_cache"
  /** Whatever the provider's own API counts (Anthropic and Bedrock leave the cache out, the others include it). */
  | "provider_native";

export interface InstrumentationTokens {
  /** Instrumentation scope name as the spans carry it. */
  scope: string;
  /** This reading applies to versions up to and including this one; a later entry of the same scope covers the rest. */
  upTo?: string;
  reading: InputTokenReading;
  /** Where the instrumentation writes the count (repository and path), read for this table. */
  source: string;
}

/**
 * What each known instrumentation writes as its input-token count, from its source (docs/otlp.md,
 * "Tokens", has the same table). First matching entry wins; a scope not listed follows the
 * conventions. Keep the two in step.
 */
export const INSTRUMENTATION_TOKENS: readonly InstrumentationTokens[] = [
  {
    scope: "@traceloop/instrumentation-anthropic",
    upTo: "0.27.0",
    reading: "excludes_cache",
    source: "traceloop/openllmetry-js packages/instrumentation-anthropic/src/instrumentation.ts",
  },
  {
    scope: "@traceloop/instrumentation-anthropic",
    reading: "includes_cache",
    source: "traceloop/openllmetry-js packages/instrumentation-anthropic/src/instrumentation.ts (#1028)",
  },
  {
    scope: "@traceloop/instrumentation-bedrock",
    upTo: "0.27.0",
    reading: "provider_native",
    source: "traceloop/openllmetry-js packages/instrumentation-bedrock/src/instrumentation.ts",
  },
  {
    scope: "@traceloop/instrumentation-bedrock",
    reading: "includes_cache",
    source: "traceloop/openllmetry-js packages/instrumentation-bedrock/src/instrumentation.ts (#1028)",
  },
  {
    scope: "opentelemetry.instrumentation.anthropic",
    reading: "includes_cache",
    source:
      "traceloop/openllmetry packages/opentelemetry-instrumentation-anthropic/opentelemetry/instrumentation/anthropic/__init__.py",
  },
  {
    scope: "opentelemetry.instrumentation.bedrock",
    reading: "excludes_cache",
    source:
      "traceloop/openllmetry packages/opentelemetry-instrumentation-bedrock/opentelemetry/instrumentation/bedrock/span_utils.py",
  },
  {
    scope: "@arizeai/openinference-instrumentation-anthropic",
    reading: "excludes_cache",
    source: "Arize-ai/openinference js/packages/openinference-instrumentation-anthropic/src/instrumentation.ts",
  },
  {
    scope: "@arizeai/openinference-instrumentation-bedrock",
    reading: "excludes_cache",
    source:
      "Arize-ai/openinference js/packages/openinference-instrumentation-bedrock/src/attributes/invoke-model-response-attributes.ts",
  },
  {
    scope: "openinference.instrumentation.anthropic",
    reading: "includes_cache",
    source:
      "Arize-ai/openinference python/instrumentation/openinference-instrumentation-anthropic/src/openinference/instrumentation/anthropic/_utils.py",
  },
  {
    scope: "openinference.instrumentation.bedrock",
    reading: "includes_cache",
    source:
      "Arize-ai/openinference python/instrumentation/openinference-instrumentation-bedrock/src/openinference/instrumentation/bedrock/utils/anthropic/_attributes.py",
  },
  // Vercel AI SDK, scope "ai" (no version): up to v5 the provider's own count (Anthropic's leaves
  // the cache out); v6 the total, with ai.usage.inputTokenDetails.* beside it from 6.0.119 and
  // Anthropic's own usage in the metadata always (inputTokenReading below tells them apart).
  { scope: "ai", reading: "provider_native", source: "vercel/ai packages/otel/src/legacy-open-telemetry.ts" },
  { scope: "gen_ai", reading: "includes_cache", source: "vercel/ai packages/otel/src/open-telemetry.ts" },
];

/** Numeric dotted-version comparison (`0.27.0` <= `0.27.0` < `0.27.1` < `0.28.0`); pre-release tags ignored. */
export function versionAtMost(version: string, max: string): boolean {
  const parts = (v: string) =>
    v
      .replace(/^v/, "")
      .split(/[-+]/)[0]
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const a = parts(version);
  const b = parts(max);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return true;
}

/** Providers whose own API input count leaves the cache out: Anthropic (direct, or Claude on Vertex) and Bedrock (Converse and Claude's InvokeModel). */
function providerExcludesCache(provider: string, model: string | null): boolean {
  if (provider === "anthropic" || provider === "aws.bedrock") return true;
  return provider === "gcp.vertex_ai" && (model ?? "").toLowerCase().includes("claude");
}

/** The span's input count beside the provider's own count without the cache (usage-details.ts `nativeInput`) and the cache part. */
export interface OwnReport {
  input: number;
  nativeInput: number | null;
  cached: number;
}

export interface InstrumentationScope {
  name: string | null;
  version: string | null;
}

/**
 * How to read the span's input-token count: by the provider's own report beside it where the span
 * carries one (`own`), else by its instrumentation (scope name and version, from
 * INSTRUMENTATION_TOKENS), else the conventions' rule (the count includes the cache).
 */
export function inputTokenReading(
  scope: InstrumentationScope,
  provider: string,
  model: string | null,
  a: Attributes,
  own?: OwnReport,
): { includesCache: boolean; reading: InputTokenReading; known: boolean } {
  let reading: InputTokenReading = "includes_cache";
  let known = false;
  for (const entry of INSTRUMENTATION_TOKENS) {
    if (entry.scope !== scope.name) continue;
    if (entry.upTo && (!scope.version || !versionAtMost(scope.version, entry.upTo))) continue;
    reading = entry.reading;
    known = true;
    break;
  }
  // AI SDK 6 and later write the detailed usage beside a total that includes the cache.
  if (scope.name === "ai" && Object.keys(a).some((k) => k.startsWith("ai.usage.inputTokenDetails.")))
    reading = "includes_cache";
  // The scope "ai" carries no version, and AI SDK 6 before 6.0.119 writes the total with no details
  // beside it (as 5 writes the provider's own count without them): the provider's own report in
  // the span's metadata says which the count is (docs/otlp.md, "Tokens").
  if (own && own.nativeInput !== null && own.cached > 0) {
    if (own.input === own.nativeInput + own.cached) reading = "includes_cache";
    else if (own.input === own.nativeInput) reading = "excludes_cache";
  }
  const includesCache =
    reading === "includes_cache" || (reading === "provider_native" && !providerExcludesCache(provider, model));
  return { includesCache, reading, known };
}

/**
 * Token counts -> the OpenAI usage object the analysis reads: prompt_tokens includes cached
 * tokens (prompt_tokens_details.cached_tokens = cache reads, .cache_creation_tokens = cache
 * writes); reasoning tokens are part of completion_tokens.
 */
export function normaliseUsage(
  a: Attributes,
  provider: string,
  model: string | null,
  scope: InstrumentationScope = { name: null, version: null },
): Record<string, unknown> {
  // Parts billed at their own rates (usage-details.ts), in the stored shape's names (docs/pricing.md).
  const d = usageDetails(a);
  let input = firstInt(
    a,
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
    "llm.usage.prompt_tokens",
  );
  const output = firstInt(
    a,
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
    "llm.usage.completion_tokens",
  );
  const cacheRead =
    firstInt(
      a,
      "gen_ai.usage.cache_read.input_tokens",
      "gen_ai.usage.cache_read_input_tokens",
      "llm.token_count.prompt_details.cache_read",
      "ai.usage.inputTokenDetails.cacheReadTokens",
      "ai.usage.cachedInputTokens",
    ) ?? d.cacheRead;
  const cacheWrite =
    firstInt(
      a,
      "gen_ai.usage.cache_creation.input_tokens",
      "gen_ai.usage.cache_creation_input_tokens",
      "llm.token_count.prompt_details.cache_write",
      "ai.usage.inputTokenDetails.cacheWriteTokens",
    ) ?? d.cacheWrite;
  const reasoning = firstInt(a, "gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning");
  const cached = (cacheRead ?? 0) + (cacheWrite ?? 0);
  // A total below the cached part can only be a count without the cache, whatever the instrumentation says.
  if (
    input !== null &&
    cached > 0 &&
    (input < cached ||
      !inputTokenReading(scope, provider, model, a, { input, nativeInput: d.nativeInput, cached }).includesCache)
  )
    input += cached;
  const prompt = input ?? 0;
  const completion = output ?? 0;
  const usage: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens:
      firstInt(a, "llm.token_count.total", "llm.usage.total_tokens", "gen_ai.usage.total_tokens") ??
      prompt + completion,
  };
  const prompts: Record<string, number> = {};
  if (cacheRead !== null || cacheWrite !== null) {
    prompts.cached_tokens = cacheRead ?? 0;
    prompts.cache_creation_tokens = cacheWrite ?? 0;
  }
  // The 1-hour writes are a part of the writes: never more than the writes the span counts.
  if (d.cacheWrite1h && cacheWrite) prompts.cache_creation_1h_tokens = Math.min(d.cacheWrite1h, cacheWrite);
  if (d.audioInput) prompts.audio_tokens = d.audioInput;
  if (d.imageInput) prompts.image_tokens = d.imageInput;
  if (Object.keys(prompts).length) usage.prompt_tokens_details = prompts;
  const completions: Record<string, number> = {};
  if (reasoning !== null) completions.reasoning_tokens = reasoning;
  if (d.audioOutput) completions.audio_tokens = d.audioOutput;
  if (Object.keys(completions).length) usage.completion_tokens_details = completions;
  if (input === null && output === null) usage.unreported = true;
  return usage;
}
