import { createRequire } from "node:module";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { AnthropicInstrumentation as TraceloopAnthropicInstrumentation } from "@traceloop/instrumentation-anthropic";
import { OpenAIInstrumentation as OpenInferenceOpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import type { ModelCall } from "./genai-spans";

/**
 * One chat call made with a provider's own client under a real instrumentation, its spans sent
 * by the SDK's exporter; only the provider's API is faked (msw, in this process). The session is
 * named on a parent span, as apps do: `gen_ai.conversation.id` (OpenLLMetry) or `session.id`
 * (OpenInference).
 */
const require = createRequire(import.meta.url);

export type Instrumented = "traceloop-anthropic" | "openinference-openai";

export const INSTRUMENTED_MODELS: Record<Instrumented, { model: string; input: number; output: number }> = {
  "traceloop-anthropic": { model: "claude-haiku-4-5", input: 1, output: 5 },
  "openinference-openai": { model: "gpt-4o-mini", input: 0.15, output: 0.6 },
};

export async function instrumentedCall(opts: {
  via: Instrumented;
  baseUrl: string;
  credential: string;
  encoding: "protobuf" | "json";
  serviceName: string;
  call: ModelCall;
}): Promise<void> {
  const { call } = opts;
  const model = INSTRUMENTED_MODELS[opts.via].model;
  const msw = setupServer(
    http.post("https://api.anthropic.com/v1/messages", () =>
      HttpResponse.json({
        id: "msg_e2e",
        type: "message",
        role: "assistant",
        model: `${model}-20251001`,
        content: [{ type: "text", text: call.answer }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: call.inputTokens, output_tokens: call.outputTokens },
      }),
    ),
    http.post("https://api.openai.com/v1/chat/completions", () =>
      HttpResponse.json({
        id: "chatcmpl-e2e",
        object: "chat.completion",
        created: 1_760_000_000,
        model: `${model}-2024-07-18`,
        choices: [{ index: 0, message: { role: "assistant", content: call.answer }, finish_reason: "stop" }],
        usage: {
          prompt_tokens: call.inputTokens,
          completion_tokens: call.outputTokens,
          total_tokens: call.inputTokens + call.outputTokens,
        },
      }),
    ),
  );
  const config = { url: `${opts.baseUrl}/v1/traces`, headers: { Authorization: `Bearer ${opts.credential}` } };
  const tracerProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": opts.serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(
        opts.encoding === "protobuf" ? new ProtoTraceExporter(config) : new JsonTraceExporter(config),
      ),
    ],
  });
  const tracer = tracerProvider.getTracer(opts.serviceName);
  msw.listen({ onUnhandledRequest: "bypass" });
  // The call's span is a child of the session span only with a context manager (as the Node SDK sets up).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  try {
    if (opts.via === "traceloop-anthropic") {
      const anthropicModule = require("@anthropic-ai/sdk");
      const instrumentation = new TraceloopAnthropicInstrumentation({ traceContent: true });
      instrumentation.setTracerProvider(tracerProvider);
      instrumentation.manuallyInstrument(anthropicModule);
      try {
        const client = new anthropicModule.Anthropic({ apiKey: "sk-ant-test" });
        await tracer.startActiveSpan("agent", { attributes: { "gen_ai.conversation.id": call.sessionId } }, (span) =>
          client.messages
            .create({ model, max_tokens: 256, system: call.system, messages: [{ role: "user", content: call.user }] })
            .finally(() => span.end()),
        );
      } finally {
        instrumentation.disable();
      }
    } else {
      const openaiModule = require("openai");
      const instrumentation = new OpenInferenceOpenAIInstrumentation({
        instrumentationConfig: { enabled: false },
        tracerProvider,
      });
      instrumentation.manuallyInstrument(openaiModule);
      try {
        const client = new openaiModule.OpenAI({ apiKey: "sk-test" });
        await tracer.startActiveSpan("chat-session", { attributes: { "session.id": call.sessionId } }, (span) =>
          client.chat.completions
            .create({
              model,
              messages: [
                { role: "system", content: call.system },
                { role: "user", content: call.user },
              ],
            })
            .finally(() => span.end()),
        );
      } finally {
        instrumentation.disable();
      }
    }
    await tracerProvider.forceFlush();
  } finally {
    context.disable();
    msw.close();
    await tracerProvider.shutdown();
  }
}
