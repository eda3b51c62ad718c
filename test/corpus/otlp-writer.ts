/**
 * The corpus's OTLP channel: a model call the script made, rendered as the OTLP/JSON span an
 * instrumentation would export (current GenAI conventions: gen_ai.input.messages /
 * gen_ai.output.messages with parts). Written from the instrumentations' documented behaviour
 * (docs/otlp.md, "Tokens"), not from Cellar's mapper: each `Instrumentation` writes its own input
 * count, the cache left in or out, as the real one does.
 */
import type { Msg } from "./message.ts";

export interface Instrumentation {
  scope: { name: string; version: string };
  /** `gen_ai.provider.name` / `gen_ai.system` as this instrumentation writes it. */
  providerKey: "gen_ai.provider.name" | "gen_ai.system";
  provider: string;
  /** Does the input count it writes include cache reads and writes? */
  inputIncludesCache: boolean;
  /** Cache attribute names it writes (reads, writes). */
  cacheKeys: [string, string];
  /**
   * Where it writes the conversation and the stop reason: the current conventions' messages and
   * `gen_ai.response.finish_reasons`, or OpenLLMetry's legacy indexed `gen_ai.prompt.N.*` /
   * `gen_ai.completion.N.*` (finish reason on `gen_ai.completion.0.finish_reason`, text only).
   */
  style?: "conventions" | "openllmetry-legacy";
}

const CONVENTIONS_CACHE: [string, string] = [
  "gen_ai.usage.cache_read.input_tokens",
  "gen_ai.usage.cache_creation.input_tokens",
];
const OPENLLMETRY_PY_CACHE: [string, string] = [
  "gen_ai.usage.cache_read_input_tokens",
  "gen_ai.usage.cache_creation_input_tokens",
];
const instrumentation = (
  [name, version]: [string, string],
  [providerKey, provider]: [Instrumentation["providerKey"], string],
  inputIncludesCache: boolean,
  cacheKeys: [string, string],
): Instrumentation => ({ scope: { name, version }, providerKey, provider, inputIncludesCache, cacheKeys });

/** A few real instrumentations, as they write their spans (docs/otlp.md, "Tokens"). */
export const INSTRUMENTATIONS = {
  openllmetryAnthropicJs: instrumentation(
    ["@traceloop/instrumentation-anthropic", "0.27.0"],
    ["gen_ai.provider.name", "anthropic"],
    false,
    CONVENTIONS_CACHE,
  ),
  /** Before 0.23 (legacy attributes): Anthropic's own stop_reason, unmapped. */
  openllmetryAnthropicJsLegacy: {
    ...instrumentation(
      ["@traceloop/instrumentation-anthropic", "0.22.6"],
      ["gen_ai.system", "Anthropic"],
      false,
      CONVENTIONS_CACHE,
    ),
    style: "openllmetry-legacy",
  } satisfies Instrumentation,
  /** Before 0.54 (legacy attributes): Anthropic's own stop_reason, unmapped. */
  openllmetryAnthropicPythonLegacy: {
    ...instrumentation(
      ["opentelemetry.instrumentation.anthropic", "0.53.4"],
      ["gen_ai.system", "Anthropic"],
      true,
      OPENLLMETRY_PY_CACHE,
    ),
    style: "openllmetry-legacy",
  } satisfies Instrumentation,
  openllmetryAnthropicPython: instrumentation(
    ["opentelemetry.instrumentation.anthropic", "0.62.1"],
    ["gen_ai.system", "Anthropic"],
    true,
    OPENLLMETRY_PY_CACHE,
  ),
  openllmetryBedrockPython: instrumentation(
    ["opentelemetry.instrumentation.bedrock", "0.62.1"],
    ["gen_ai.system", "AWS"],
    false,
    OPENLLMETRY_PY_CACHE,
  ),
  googleGenAiContrib: instrumentation(
    ["opentelemetry.instrumentation.google_genai", "0.4b0"],
    ["gen_ai.system", "gemini"],
    true,
    CONVENTIONS_CACHE,
  ),
  mistralConventions: instrumentation(
    ["acme.mistral-instrumentation", "1.0.0"],
    ["gen_ai.provider.name", "mistral_ai"],
    true,
    CONVENTIONS_CACHE,
  ),
};

const hex = (seed: string, bytes: number) => {
  let h = 2166136261;
  let out = "";
  while (out.length < bytes * 2) {
    for (const ch of `${seed}:${out.length}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out.slice(0, bytes * 2);
};

/** OpenAI-shape messages as the conventions' parts. */
function parts(m: Msg): Record<string, unknown> {
  const out: Array<Record<string, unknown>> = [];
  if (m.role === "tool")
    return { role: "tool", parts: [{ type: "tool_call_response", id: m.tool_call_id, response: m.content }] };
  if (typeof m.content === "string" && m.content !== "") out.push({ type: "text", content: m.content });
  for (const c of m.tool_calls ?? [])
    out.push({ type: "tool_call", id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) });
  return { role: m.role, parts: out };
}

const attr = (key: string, value: unknown) => ({
  key,
  value:
    typeof value === "number"
      ? { intValue: String(value) }
      : Array.isArray(value)
        ? { arrayValue: { values: value.map((v) => ({ stringValue: String(v) })) } }
        : { stringValue: String(value) },
});

/** OpenLLMetry's legacy indexed attributes (text messages only). */
function legacyMessages(call: OtlpCall) {
  if (call.request.some((m) => m.role === "tool" || m.tool_calls) || call.reply.tool_calls)
    throw new Error("the legacy writer renders text messages only");
  return [
    ...call.request.flatMap((m, i) => [
      attr(`gen_ai.prompt.${i}.role`, m.role),
      attr(`gen_ai.prompt.${i}.content`, String(m.content ?? "")),
    ]),
    attr("gen_ai.completion.0.role", "assistant"),
    attr("gen_ai.completion.0.content", String(call.reply.content ?? "")),
    attr("gen_ai.completion.0.finish_reason", call.finish),
  ];
}

export interface OtlpCall {
  sessionId: string;
  serviceName: string;
  index: number;
  startMs: number;
  endMs: number;
  requestModel: string;
  responseModel: string;
  request: Msg[];
  reply: Msg;
  finish: string;
  usage: { prompt: number; completion: number; cached: number; written: number };
}

/** One call as an OTLP/JSON export request; returns it and the trace id Cellar will store it under. */
export function otlpExport(call: OtlpCall, inst: Instrumentation): { body: unknown; traceId: string } {
  const traceId = hex(`${call.sessionId}/trace`, 16);
  const spanId = hex(`${call.sessionId}/span/${call.index}`, 8);
  const u = call.usage;
  const input = inst.inputIncludesCache ? u.prompt : u.prompt - u.cached - u.written;
  const attributes = [
    attr("gen_ai.operation.name", "chat"),
    attr(inst.providerKey, inst.provider),
    attr("gen_ai.request.model", call.requestModel),
    attr("gen_ai.response.model", call.responseModel),
    attr("gen_ai.response.id", `resp-${call.sessionId}-${call.index}`),
    attr("gen_ai.conversation.id", call.sessionId),
    ...(inst.style === "openllmetry-legacy"
      ? legacyMessages(call)
      : [
          attr("gen_ai.input.messages", JSON.stringify(call.request.map(parts))),
          attr("gen_ai.output.messages", JSON.stringify([{ ...parts(call.reply), finish_reason: call.finish }])),
          attr("gen_ai.response.finish_reasons", [call.finish]),
        ]),
    attr("gen_ai.usage.input_tokens", input),
    attr("gen_ai.usage.output_tokens", u.completion),
    ...(u.cached ? [attr(inst.cacheKeys[0], u.cached)] : []),
    ...(u.written ? [attr(inst.cacheKeys[1], u.written)] : []),
  ];
  const body = {
    resourceSpans: [
      {
        resource: {
          attributes: [attr("service.name", call.serviceName), attr("deployment.environment.name", "corpus")],
        },
        scopeSpans: [
          {
            scope: inst.scope,
            spans: [
              {
                traceId,
                spanId,
                name: `chat ${call.requestModel}`,
                kind: 3,
                startTimeUnixNano: `${call.startMs}000000`,
                endTimeUnixNano: `${call.endMs}000000`,
                attributes,
                status: {},
              },
            ],
          },
        ],
      },
    ],
  };
  return { body, traceId: `${traceId}-${spanId}` };
}
