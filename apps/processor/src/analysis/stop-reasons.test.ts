import { expect, test } from "bun:test";
import { DEFAULT_DETECTOR_CONFIG } from "@cellar/shared/analysis/detector-config";
import { mapSpans } from "@cellar/shared/otlp/map";
import { testSpan } from "@cellar/shared/otlp/test-span";
import { callsOfTrace } from "./calls.ts";
import { callFindings } from "./detectors-registry.ts";
import { STOP_REASON_TABLE, stopClass } from "./stop-reasons.ts";

/**
 * One row per instrumentation and provider (docs/analysis.md, "Stop reasons"): the span as that
 * instrumentation records it (attribute names and the raw value, from its source), mapped by the
 * OTLP door and judged by the call detectors.
 */
type Row = [label: string, attributes: Record<string, unknown>, detector: string | null];

const base = (system: string, model: string) => ({
  "gen_ai.system": system,
  "gen_ai.request.model": model,
  "gen_ai.usage.input_tokens": 100,
  "gen_ai.usage.output_tokens": 512,
});
/** OpenLLMetry's legacy indexed attributes, the stop reason on gen_ai.completion.0.finish_reason. */
const legacy = (system: string, model: string, reason: string, text = "The sea, the endless") => ({
  "llm.request.type": "chat",
  ...base(system, model),
  "gen_ai.prompt.0.role": "user",
  "gen_ai.prompt.0.content": "Write a poem.",
  "gen_ai.completion.0.role": "assistant",
  "gen_ai.completion.0.content": text,
  "gen_ai.completion.0.finish_reason": reason,
});
/** The current conventions: output messages with their finish_reason, and the span's list. */
const conventions = (provider: string, model: string, reason: string, text = "The sea, the endless") => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": provider,
  "gen_ai.request.model": model,
  "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Write a poem." }] }]),
  "gen_ai.output.messages": JSON.stringify([
    { role: "assistant", parts: text ? [{ type: "text", content: text }] : [], finish_reason: reason },
  ]),
  "gen_ai.response.finish_reasons": [reason],
  "gen_ai.usage.input_tokens": 100,
  "gen_ai.usage.output_tokens": 512,
});
/** OpenInference: llm.* messages, the stop reason on llm.finish_reason (or llm.stop_reason). */
const openInference = (provider: string, model: string, key: string, reason: string, text = "The sea") => ({
  "openinference.span.kind": "LLM",
  "llm.provider": provider,
  "llm.model_name": model,
  "llm.input_messages.0.message.role": "user",
  "llm.input_messages.0.message.content": "Write a poem.",
  "llm.output_messages.0.message.role": "assistant",
  "llm.output_messages.0.message.content": text,
  [key]: reason,
  "llm.token_count.prompt": 100,
  "llm.token_count.completion": 512,
});
/** The Vercel AI SDK's doGenerate span: ai.response.finishReason and gen_ai.response.finish_reasons. */
const vercel = (provider: string, model: string, reason: string) => ({
  "ai.operationId": "ai.generateText.doGenerate",
  "gen_ai.system": provider,
  "gen_ai.request.model": model,
  "ai.response.finishReason": reason,
  "gen_ai.response.finish_reasons": [reason],
  "gen_ai.usage.input_tokens": 100,
  "gen_ai.usage.output_tokens": 512,
});

const ROWS: Row[] = [
  // OpenLLMetry JS (@traceloop/instrumentation-*): before 0.23 Anthropic's raw stop_reason on the
  // legacy attributes; from 0.23 mapped to the conventions' values (anthropicFinishReasonMap).
  [
    "OpenLLMetry JS <0.23, Anthropic max_tokens",
    legacy("Anthropic", "claude-haiku-4-5", "max_tokens"),
    "response_cut_off",
  ],
  ["OpenLLMetry JS <0.23, Anthropic end_turn", legacy("Anthropic", "claude-haiku-4-5", "end_turn"), null],
  ["OpenLLMetry JS <0.23, Anthropic tool_use", legacy("Anthropic", "claude-haiku-4-5", "tool_use"), null],
  [
    "OpenLLMetry JS >=0.23, Anthropic length",
    conventions("anthropic", "claude-haiku-4-5", "length"),
    "response_cut_off",
  ],
  // anthropicFinishReasonMap (instrumentation-anthropic, traceloop/openllmetry-js@1faf69d) maps
  // end_turn, max_tokens, stop_sequence and tool_use; any other stop_reason is written verbatim.
  [
    "OpenLLMetry JS >=0.23, Anthropic refusal (unmapped, verbatim)",
    conventions("anthropic", "claude-haiku-4-5", "refusal", ""),
    "refusal",
  ],
  [
    "OpenLLMetry JS >=0.23, Anthropic model_context_window_exceeded (unmapped, verbatim)",
    conventions("anthropic", "claude-haiku-4-5", "model_context_window_exceeded"),
    "response_cut_off",
  ],
  ["OpenLLMetry JS, Cohere MAX_TOKENS (legacy)", legacy("Cohere", "command-r", "MAX_TOKENS"), "response_cut_off"],
  ["OpenLLMetry JS, Cohere ERROR_TOXIC (legacy)", legacy("Cohere", "command-r", "ERROR_TOXIC", ""), "content_filtered"],
  ["OpenLLMetry JS, Cohere COMPLETE (legacy)", legacy("Cohere", "command-r", "COMPLETE"), null],
  ["OpenLLMetry JS, OpenAI length", legacy("OpenAI", "gpt-4o-mini", "length"), "response_cut_off"],
  ["OpenLLMetry JS, OpenAI content_filter", legacy("OpenAI", "gpt-4o-mini", "content_filter", ""), "content_filtered"],
  ["OpenLLMetry JS, Vertex MAX_TOKENS", legacy("Google", "gemini-2.5-flash", "MAX_TOKENS"), "response_cut_off"],
  // OpenLLMetry Python: before 0.54 Anthropic's raw stop_reason; Bedrock maps a few values and
  // passes the rest through verbatim (BEDROCK_FINISH_REASON_MAP); Gemini maps its enum names.
  [
    "OpenLLMetry Python <0.54, Anthropic max_tokens",
    legacy("Anthropic", "claude-sonnet-4-5", "max_tokens"),
    "response_cut_off",
  ],
  ["OpenLLMetry Python <0.54, Anthropic refusal", legacy("Anthropic", "claude-sonnet-4-5", "refusal", ""), "refusal"],
  // From 0.54 (span_utils.py _FINISH_REASON_MAP, traceloop/openllmetry@93429cf): the conventions'
  // attributes, max_tokens as length, refusal written verbatim.
  [
    "OpenLLMetry Python >=0.54, Anthropic max_tokens (mapped to length)",
    conventions("anthropic", "claude-sonnet-4-5", "length"),
    "response_cut_off",
  ],
  [
    "OpenLLMetry Python >=0.54, Anthropic refusal (unmapped, verbatim)",
    conventions("anthropic", "claude-sonnet-4-5", "refusal", ""),
    "refusal",
  ],
  [
    "OpenLLMetry Python, Bedrock Converse context exceeded",
    conventions("aws.bedrock", "nova-pro", "model_context_window_exceeded"),
    "response_cut_off",
  ],
  [
    "OpenLLMetry Python, Bedrock Converse content_filtered",
    conventions("aws.bedrock", "nova-pro", "content_filtered", ""),
    "content_filtered",
  ],
  [
    "OpenLLMetry Python, Bedrock guardrail (mapped)",
    conventions("aws.bedrock", "nova-pro", "content_filter", ""),
    "content_filtered",
  ],
  [
    "OpenLLMetry Python, Bedrock Titan LENGTH",
    conventions("aws.bedrock", "titan-text-express", "LENGTH"),
    "response_cut_off",
  ],
  [
    "OpenLLMetry Python, Bedrock Mistral length",
    conventions("aws.bedrock", "mistral-large", "length"),
    "response_cut_off",
  ],
  [
    "OpenLLMetry Python, Gemini SAFETY (mapped)",
    conventions("gcp.gen_ai", "gemini-2.5-flash", "content_filter", ""),
    "content_filtered",
  ],
  [
    "OpenLLMetry Python, Mistral model_length",
    legacy("MistralAI", "mistral-small", "model_length"),
    "response_cut_off",
  ],
  // The GenAI conventions (contrib instrumentations: openai-v2, google-genai, vertexai): stop,
  // length, content_filter, tool_call, error; some write the provider's enum name.
  ["contrib openai-v2, length", conventions("openai", "gpt-4o-mini", "length"), "response_cut_off"],
  // The Responses API (response_extractors.py _finish_reason_from_status,
  // open-telemetry/opentelemetry-python-contrib@0047a96): completed -> stop; incomplete, failed
  // and cancelled verbatim.
  ["contrib openai-v2 Responses, incomplete", conventions("openai", "gpt-4.1-mini", "incomplete"), "response_cut_off"],
  ["contrib openai-v2 Responses, failed", conventions("openai", "gpt-4.1-mini", "failed"), null],
  ["contrib openai-v2 Responses, completed as stop", conventions("openai", "gpt-4.1-mini", "stop"), null],
  ["contrib google-genai, MAX_TOKENS", conventions("gcp.gen_ai", "gemini-2.5-flash", "MAX_TOKENS"), "response_cut_off"],
  [
    "contrib vertexai, FinishReason.SAFETY",
    conventions("gcp.vertex_ai", "gemini-2.5-flash", "FinishReason.SAFETY", ""),
    "content_filtered",
  ],
  [
    "contrib vertexai, RECITATION",
    conventions("gcp.vertex_ai", "gemini-2.5-flash", "recitation", ""),
    "content_filtered",
  ],
  ["conventions, tool_call", conventions("anthropic", "claude-haiku-4-5", "tool_call"), null],
  ["conventions, error", conventions("mistral_ai", "mistral-small", "error"), null],
  // OpenInference: llm.finish_reason (OpenAI JS, Anthropic, google-genai, Groq, LangChain Python)
  // carries the provider's value; the Bedrock JS instrumentation writes llm.stop_reason.
  [
    "OpenInference, OpenAI length",
    openInference("openai", "gpt-4o-mini", "llm.finish_reason", "length"),
    "response_cut_off",
  ],
  [
    "OpenInference, Anthropic max_tokens",
    openInference("anthropic", "claude-haiku-4-5", "llm.finish_reason", "max_tokens"),
    "response_cut_off",
  ],
  [
    "OpenInference, google-genai MAX_TOKENS",
    openInference("google", "gemini-2.5-flash", "llm.finish_reason", "MAX_TOKENS"),
    "response_cut_off",
  ],
  [
    "OpenInference, Bedrock Converse max_tokens",
    openInference("aws", "nova-pro", "llm.stop_reason", "max_tokens"),
    "response_cut_off",
  ],
  [
    "OpenInference, Bedrock guardrail_intervened",
    openInference("aws", "nova-pro", "llm.stop_reason", "guardrail_intervened", ""),
    "content_filtered",
  ],
  // The Vercel AI SDK: its own values, hyphenated.
  ["Vercel AI SDK, length", vercel("anthropic.messages", "claude-haiku-4-5", "length"), "response_cut_off"],
  ["Vercel AI SDK, content-filter", vercel("openai.chat", "gpt-4o-mini", "content-filter"), "content_filtered"],
  ["Vercel AI SDK, tool-calls", vercel("openai.chat", "gpt-4o-mini", "tool-calls"), null],
];

function detectorsOf(attributes: Record<string, unknown>): string[] {
  const mapped = mapSpans([testSpan({ ...attributes, "session.id": "s-stop" })]);
  expect(mapped.rejected).toBe(0);
  const payload = mapped.accepted[0].payload as any;
  const calls = callsOfTrace(
    {
      traceId: payload.trace_id,
      startTime: new Date(payload.start_time),
      endTime: new Date(payload.end_time),
      payload,
    },
    [],
  );
  return calls.flatMap((c) => callFindings(c, DEFAULT_DETECTOR_CONFIG, undefined)).map((f) => f.detector);
}

for (const [label, attributes, detector] of ROWS) {
  test(`stop reason: ${label} -> ${detector ?? "no finding"}`, () => {
    const found = detectorsOf(attributes).filter((d) =>
      ["response_cut_off", "content_filtered", "refusal"].includes(d),
    );
    expect(found).toEqual(detector ? [detector] : []);
  });
}

test("every spelling of a value is one class; unknown values are other", () => {
  for (const [raw, cls] of Object.entries(STOP_REASON_TABLE)) {
    expect(stopClass(raw)).toBe(cls);
    expect(stopClass(raw.toUpperCase())).toBe(cls);
    expect(stopClass(`FinishReason.${raw.toUpperCase()}`)).toBe(cls);
    expect(stopClass(raw.replace(/_/g, "-"))).toBe(cls);
  }
  expect(stopClass("FINISH_REASON_UNSPECIFIED")).toBe("other");
  expect(stopClass("pause_turn")).toBe("other");
  expect(stopClass(null)).toBe("other");
  expect(stopClass("")).toBe("other");
});
