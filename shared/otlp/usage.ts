import type { Attributes } from "./decode.ts";

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

export function providerName(raw: unknown, model: string | null): string {
  const given = typeof raw === "string" ? raw.trim().toLowerCase() : "";
  if (given) return ALIASES[given] ?? given.slice(0, 64);
  // Bedrock ids: an optional cross-region prefix, then `vendor.model` (us.anthropic.claude-...).
  const m = (model ?? "").toLowerCase().replace(/^(us|eu|apac|global|us-gov)\.(?=[a-z0-9-]+\.)/, "");
  if (/^(anthropic|amazon|meta|cohere|ai21|mistral|deepseek|writer)\./.test(m)) return "aws.bedrock";
  if (m.startsWith("claude")) return "anthropic";
  if (m.startsWith("gemini")) return "gcp.gemini";
  if (/^(mistral|codestral|ministral|magistral|pixtral)/.test(m)) return "mistral_ai";
  return "openai";
}

/**
 * Providers whose own input-token count leaves cache reads and writes out: Anthropic's API, Claude
 * on Bedrock and Vertex (shared/pricing/prices.json lists each provider's semantics). The
 * conventions say gen_ai.usage.input_tokens SHOULD include them, but the instrumentations copy the
 * provider's number (OpenLLMetry's Anthropic instrumentation does), so for these providers the
 * cache parts are added back. docs/otlp.md, "Tokens".
 */
export function inputExcludesCache(provider: string, model: string | null): boolean {
  if (provider === "anthropic") return true;
  const claude = (model ?? "").toLowerCase().includes("claude");
  return claude && (provider === "aws.bedrock" || provider === "gcp.vertex_ai");
}

const int = (v: unknown): number | null => {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? Math.min(Math.round(n), 2_147_483_647) : null;
};
const firstInt = (a: Attributes, ...keys: string[]): number | null => {
  for (const k of keys) {
    const n = int(a[k]);
    if (n !== null) return n;
  }
  return null;
};

/**
 * Token counts -> the OpenAI usage object the analysis reads: prompt_tokens includes cached
 * tokens (prompt_tokens_details.cached_tokens = cache reads, .cache_creation_tokens = cache
 * writes); reasoning tokens are part of completion_tokens.
 */
export function normaliseUsage(a: Attributes, provider: string, model: string | null): Record<string, unknown> {
  const genAiInput = firstInt(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens");
  // OpenInference's llm.token_count.prompt already counts the cache (its prompt_details are parts of it).
  let input = genAiInput ?? firstInt(a, "llm.token_count.prompt", "llm.usage.prompt_tokens");
  const output = firstInt(
    a,
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
    "llm.usage.completion_tokens",
  );
  const cacheRead = firstInt(
    a,
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "llm.token_count.prompt_details.cache_read",
  );
  const cacheWrite = firstInt(
    a,
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
  );
  const reasoning = firstInt(a, "gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning");
  const cached = (cacheRead ?? 0) + (cacheWrite ?? 0);
  // A total below the cached part can only be a count without the cache, whatever the provider.
  if (input !== null && cached > 0 && (input < cached || (genAiInput !== null && inputExcludesCache(provider, model))))
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
  if (cacheRead !== null || cacheWrite !== null)
    usage.prompt_tokens_details = { cached_tokens: cacheRead ?? 0, cache_creation_tokens: cacheWrite ?? 0 };
  if (reasoning !== null) usage.completion_tokens_details = { reasoning_tokens: reasoning };
  if (input === null && output === null) usage.unreported = true;
  return usage;
}
