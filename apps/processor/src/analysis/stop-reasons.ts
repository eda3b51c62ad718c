/**
 * Stop reasons as every provider and instrumentation writes them, reduced to what the detectors
 * ask: did the reply stop at the token limit (`length`: response_cut_off), was it stopped by a
 * safety filter (`content_filter`: content_filtered), did it end on tool calls, or end normally.
 * The raw value is kept on the call and in a finding's evidence; only the decision reads the
 * class. docs/analysis.md, "Stop reasons", has the table of who writes what, with its sources.
 *
 * Normalisation: lower case, `-` and spaces as `_`, a Python enum's `finishreason.` prefix and
 * the `finish_reason_` prefix dropped ("FinishReason.MAX_TOKENS", "MAX_TOKENS", "max-tokens" are
 * one value). Unknown values are `other`: no finding.
 */
export type StopClass = "length" | "content_filter" | "tool_calls" | "stop" | "refusal" | "error" | "other";

const TABLE: Record<string, StopClass> = {
  // The token limit.
  length: "length", // OpenAI, Mistral, the GenAI conventions, Vercel AI SDK, Llama on Bedrock
  max_tokens: "length", // Anthropic, Bedrock Converse, Gemini/Vertex (MAX_TOKENS), Cohere (MAX_TOKENS), Nova
  max_output_tokens: "length", // OpenAI Responses (incomplete_details.reason)
  model_length: "length", // Mistral: the model's context ran out
  model_context_window_exceeded: "length", // Anthropic, Bedrock Converse
  token_limit: "length",
  // OpenAI Responses API through contrib openai-v2: the output item's status, "incomplete" when
  // incomplete_details.reason was max_output_tokens or content_filter (contrib keeps no reason;
  // either way the reply stopped short, the raw value stays in the evidence).
  incomplete: "length",
  // Stopped by a filter.
  content_filter: "content_filter", // OpenAI, Azure, the GenAI conventions
  content_filtered: "content_filter", // Bedrock Converse, Nova, Titan (CONTENT_FILTERED)
  guardrail_intervened: "content_filter", // Bedrock Converse guardrails
  safety: "content_filter", // Gemini/Vertex
  recitation: "content_filter", // Gemini/Vertex
  blocklist: "content_filter", // Gemini/Vertex
  prohibited_content: "content_filter", // Gemini/Vertex
  spii: "content_filter", // Gemini/Vertex
  image_safety: "content_filter", // Gemini/Vertex
  image_prohibited_content: "content_filter", // Gemini/Vertex
  image_recitation: "content_filter", // Gemini/Vertex
  error_toxic: "content_filter", // Cohere v1
  // Tool calls.
  tool_calls: "tool_calls", // OpenAI, Mistral
  tool_call: "tool_calls", // the GenAI conventions, Cohere v2 (TOOL_CALL)
  tool_use: "tool_calls", // Anthropic, Bedrock Converse
  function_call: "tool_calls", // OpenAI (legacy functions)
  malformed_function_call: "error", // Gemini/Vertex
  unexpected_tool_call: "error", // Gemini/Vertex
  // A normal end.
  stop: "stop", // OpenAI, Mistral, the GenAI conventions, Gemini (STOP), Vercel AI SDK
  end_turn: "stop", // Anthropic, Bedrock Converse
  stop_sequence: "stop", // Anthropic, Bedrock Converse, Cohere v2 (STOP_SEQUENCE)
  complete: "stop", // Cohere (COMPLETE)
  finish: "stop", // Titan (FINISH)
  endoftext: "stop", // AI21
  eos: "stop",
  // The model declined (Anthropic's classifier stop; OpenAI's message.refusal is read apart).
  refusal: "refusal",
  // The provider failed.
  error: "error", // the GenAI conventions, Mistral, Cohere (ERROR), Vercel AI SDK
  error_limit: "error", // Cohere v1
  timeout: "error", // Cohere v2
  failed: "error", // OpenAI Responses item status (contrib openai-v2)
  cancelled: "error", // OpenAI Responses item status (contrib openai-v2)
};

/** The class of a raw stop reason (null or unknown: `other`). */
export function stopClass(reason: string | null | undefined): StopClass {
  if (!reason) return "other";
  let key = reason
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_");
  if (key.startsWith("finishreason.")) key = key.slice("finishreason.".length);
  if (key.startsWith("finish_reason_")) key = key.slice("finish_reason_".length);
  return TABLE[key] ?? "other";
}

/** Every raw spelling the table knows, with its class (the docs table and the tests read it). */
export const STOP_REASON_TABLE: Readonly<Record<string, StopClass>> = TABLE;
