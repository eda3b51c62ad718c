/**
 * Anthropic's usage for one call with 1-hour cache writes in a 320k-token prompt, as the Messages
 * API returns it (tests of the rates: OTLP mapping, the SDK wrappers, the platform's breakdown).
 */
export const ANTHROPIC_1H_USAGE = {
  input_tokens: 50_000,
  cache_creation_input_tokens: 250_000,
  cache_read_input_tokens: 20_000,
  cache_creation: { ephemeral_5m_input_tokens: 50_000, ephemeral_1h_input_tokens: 200_000 },
  output_tokens: 1_000,
  service_tier: "standard",
};
