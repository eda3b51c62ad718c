import { calcPrice, findProvider, type ModelInfo, type ModelPrice as SourcePrice } from "@pydantic/genai-prices";

/**
 * The maintained price database Cellar takes its base prices from: @pydantic/genai-prices (MIT).
 * Its data ships inside the package (nothing is fetched at run time: `updatePrices` is never
 * called), so updating prices is updating that dependency and reviewing the diff that
 * `npm run prices:check -- --diff OLD.json` prints (docs/pricing.md).
 *
 * Cellar's provider ids (gen_ai.provider.name, shared/otlp/usage.ts) map to the database's; a call
 * is matched within its provider first (Bedrock's `us.`/`eu.`/`apac.` profiles, Vertex's `@date`
 * ids are the database's own match rules), then by the model id alone.
 */
export const SOURCE_NAME = "@pydantic/genai-prices";
/** The pinned version (package.json; source.test.ts checks they agree). */
export const SOURCE_VERSION = "0.1.8";

const PROVIDER_IDS: Record<string, string> = {
  openai: "openai",
  "azure.ai.openai": "azure",
  azure: "azure",
  anthropic: "anthropic",
  "aws.bedrock": "aws",
  "gcp.vertex_ai": "google",
  "gcp.gemini": "google",
  "gcp.gen_ai": "google",
  mistral_ai: "mistral",
  x_ai: "x-ai",
  deepseek: "deepseek",
  groq: "groq",
  cohere: "cohere",
  perplexity: "perplexity",
};

/** The database's provider id for Cellar's, or null when the database has no such provider. */
export function sourceProviderId(provider: string | null | undefined): string | null {
  if (!provider) return null;
  const p = provider.trim().toLowerCase();
  const id = PROVIDER_IDS[p] ?? p;
  return findProvider({ providerId: id }) ? id : null;
}

export interface SourceMatch {
  /** The database's provider and model id. */
  provider: string;
  modelId: string;
  /** The model's prices in force at the call's time (USD per million tokens; tiered by prompt size). */
  prices: SourcePrice;
  contextWindow: number | null;
  /** The provider's pricing page the database cites. */
  url: string | null;
}

const BEDROCK_ID =
  /^((us|eu|apac|global|us-gov|jp|au|ca)\.)?(anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer)\.[\w.-]+(-v\d+(:\d+)?)?$/i;

const folded = (model: string) =>
  model
    .trim()
    .replace(/^.*\/models\//, "")
    .replace(/^(openai|anthropic|google|mistralai|mistral)\//, "");

/**
 * The database's entry for a model at a time, or null. The usage is irrelevant to the match: one
 * input token is asked for, and the resolved entry's prices are priced by shared/pricing/lines.ts.
 */
export function matchSource(model: string, provider: string | null | undefined, at: Date): SourceMatch | null {
  const raw = model.trim();
  const id = folded(raw);
  const providerId = sourceProviderId(provider);
  const ask = (model: string, providerId?: string) => {
    try {
      return calcPrice({ input_tokens: 1 }, model, { ...(providerId ? { providerId } : {}), timestamp: at });
    } catch {
      return null;
    }
  };
  // Within the provider: the id as sent (Groq's `openai/gpt-oss-120b`), then without a vendor
  // prefix; then the id alone across providers (the model's maker, by the database's rules).
  // Without a provider, an id in Bedrock's form (`us.amazon.nova-pro-v1:0`) or Vertex's
  // (`claude-sonnet-4@20250514`) names its provider itself.
  const implied = providerId ?? (BEDROCK_ID.test(raw) ? "aws" : raw.includes("@") ? "google" : null);
  const r = (implied ? (ask(raw, implied) ?? (id !== raw ? ask(id, implied) : null)) : null) ?? ask(id);
  if (!r) return null;
  return {
    provider: r.provider.id,
    modelId: r.model.id,
    prices: r.model_price,
    contextWindow: r.model.context_window ?? null,
    url: r.provider.pricing_urls?.[0] ?? null,
  };
}

/** The database's providers Cellar maps to (PROVIDER_IDS' targets). */
export const SOURCE_PROVIDERS: string[] = [...new Set(Object.values(PROVIDER_IDS))].filter((id) =>
  findProvider({ providerId: id }),
);

/** Every model of the database, per provider (for the property and cross-source tests). */
export function sourceModels(providerId: string): ModelInfo[] {
  return findProvider({ providerId })?.models ?? [];
}

/** The database's total for a usage (its own arithmetic: tests check shared/pricing/lines.ts against it). */
export function sourceTotal(usage: Record<string, number>, model: string, providerId: string, at: Date): number | null {
  return calcPrice(usage, model, { providerId, timestamp: at })?.total_price ?? null;
}
