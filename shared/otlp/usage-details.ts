import type { Attributes } from "./decode.ts";

/**
 * The parts of a span's usage that pricing bills at their own rates (docs/pricing.md, "Rates";
 * docs/otlp.md, "Tokens"): 1-hour cache writes, audio and image tokens, and the service tier the
 * response says was used, read where each instrumentation writes them (sources checked for this
 * table, 2026-11-28):
 *
 * - GenAI conventions (open-telemetry/semantic-conventions-genai v0.1.0, model/gen-ai/spans.yaml,
 *   `attributes.gen_ai.usage.breakdown`): `gen_ai.usage.audio.input_tokens`,
 *   `gen_ai.usage.image.input_tokens`, `gen_ai.usage.audio.output_tokens`; no 1-hour cache count.
 *   OpenAI's tier: `openai.response.service_tier` (read by shared/pricing/breakdown.ts, as
 *   OpenLLMetry's openai instrumentation writes it).
 * - OpenInference (Arize-ai/openinference spec/semantic_conventions.md; written by its OpenAI,
 *   LangChain, Google GenAI and ADK instrumentations): `llm.token_count.prompt_details.audio`,
 *   `llm.token_count.completion_details.audio`; no image or 1-hour count.
 * - The Vercel AI SDK (vercel/ai packages/otel/src/legacy-open-telemetry.ts): its own
 *   `ai.usage.inputTokenDetails.*` has no audio, image or 1-hour count, but
 *   `ai.response.providerMetadata` (JSON) carries each provider's own report: Anthropic's raw
 *   usage (`anthropic.usage.cache_creation.ephemeral_1h_input_tokens`, and its cache writes,
 *   which v5's own usage attributes leave out), Bedrock Converse's `usage.cacheWriteInputTokens`,
 *   `usage.cacheDetails[{ttl, inputTokens}]` and `serviceTier.type`, Google's `usageMetadata`
 *   (`promptTokensDetails[{modality, tokenCount}]`, `serviceTier`, Vertex's `trafficType`) and
 *   OpenAI's `serviceTier`.
 * - OpenLLMetry (traceloop/openllmetry, openllmetry-js): none of the token counts above.
 */
export interface UsageDetails {
  /** Cache writes of any duration, where only the provider's own report counts them (AI SDK v5 with Anthropic or Bedrock). */
  cacheWrite: number | null;
  /**
   * Anthropic's own report (the AI SDK's `anthropic.usage`, every version): its `input_tokens`
   * (the cache left out) and its cache reads. AI SDK 5's `doGenerate` span writes no cache-read
   * attribute; AI SDK 6 before 6.0.119 writes a total that includes the cache with no details
   * beside it: these say which (usage.ts).
   */
  nativeInput: number | null;
  cacheRead: number | null;
  cacheWrite1h: number | null;
  audioInput: number | null;
  imageInput: number | null;
  audioOutput: number | null;
  /** Lower-cased: `flex`, `priority`, `on_demand`, `provisioned_throughput`... */
  serviceTier: string | null;
}

/** A token count: a non-negative finite number (or numeric string), rounded, capped at int4. */
export const int = (v: unknown): number | null => {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? Math.min(Math.round(n), 2_147_483_647) : null;
};
export const firstInt = (a: Attributes, ...keys: string[]): number | null => {
  for (const k of keys) {
    const n = int(a[k]);
    if (n !== null) return n;
  }
  return null;
};
const obj = (v: unknown): Record<string, any> | null =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, any>) : null;

/** `ai.response.providerMetadata`, parsed (a JSON string on the span); null when absent or not an object. */
function providerMetadata(a: Attributes): Record<string, any> | null {
  const raw = a["ai.response.providerMetadata"];
  if (typeof raw !== "string") return obj(raw);
  if (raw.length > 1_000_000) return null;
  try {
    return obj(JSON.parse(raw));
  } catch {
    return null;
  }
}

/** Google's `[{modality: "AUDIO", tokenCount: 12}]`, summed for one modality; null when none is listed. */
function modalityTokens(details: unknown, modality: string): number | null {
  if (!Array.isArray(details)) return null;
  let sum: number | null = null;
  for (const d of details)
    if (String(obj(d)?.modality ?? "").toUpperCase() === modality) sum = (sum ?? 0) + (int(obj(d)?.tokenCount) ?? 0);
  return sum;
}

const tierName = (v: unknown): string | null =>
  typeof v === "string" && v.trim() ? v.trim().toLowerCase().slice(0, 64) : null;

export function usageDetails(a: Attributes): UsageDetails {
  const pm = providerMetadata(a);
  const anthropic = obj(pm?.anthropic);
  const bedrock = obj(pm?.bedrock) ?? obj(pm?.amazonBedrock);
  const google = obj(pm?.google) ?? obj(pm?.googleVertex) ?? obj(pm?.vertex);
  const usageMetadata = obj(google?.usageMetadata);
  let bedrock1h: number | null = null;
  const cacheDetails = obj(bedrock?.usage)?.cacheDetails;
  if (Array.isArray(cacheDetails))
    for (const d of cacheDetails)
      if (obj(d)?.ttl === "1h") bedrock1h = (bedrock1h ?? 0) + (int(obj(d)?.inputTokens) ?? 0);
  const anthropicUsage = obj(anthropic?.usage);
  return {
    nativeInput: int(anthropicUsage?.input_tokens),
    cacheRead: int(anthropicUsage?.cache_read_input_tokens),
    cacheWrite:
      int(anthropicUsage?.cache_creation_input_tokens) ??
      int(anthropic?.cacheCreationInputTokens) ??
      int(obj(bedrock?.usage)?.cacheWriteInputTokens),
    cacheWrite1h: int(obj(anthropicUsage?.cache_creation)?.ephemeral_1h_input_tokens) ?? bedrock1h,
    audioInput:
      firstInt(a, "gen_ai.usage.audio.input_tokens", "llm.token_count.prompt_details.audio") ??
      modalityTokens(usageMetadata?.promptTokensDetails, "AUDIO"),
    imageInput:
      firstInt(a, "gen_ai.usage.image.input_tokens") ?? modalityTokens(usageMetadata?.promptTokensDetails, "IMAGE"),
    audioOutput:
      firstInt(a, "gen_ai.usage.audio.output_tokens", "llm.token_count.completion_details.audio") ??
      modalityTokens(usageMetadata?.candidatesTokensDetails, "AUDIO"),
    serviceTier:
      tierName(obj(pm?.openai)?.serviceTier) ??
      tierName(obj(pm?.azure)?.serviceTier) ??
      tierName(obj(bedrock?.serviceTier)?.type) ??
      tierName(google?.serviceTier) ??
      tierName(usageMetadata?.serviceTier) ??
      tierName(usageMetadata?.trafficType),
  };
}
