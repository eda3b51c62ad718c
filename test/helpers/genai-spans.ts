import { context, diag, DiagLogLevel, SpanKind, trace, type Attributes } from "@opentelemetry/api";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as GrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPLogExporter as GrpcLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { credentials, Metadata } from "@grpc/grpc-js";

/**
 * Model-call spans as instrumentations write them, in the current GenAI conventions and in the
 * two older dialects Cellar reads (docs/otlp.md), exported by the real OpenTelemetry SDK. Used by
 * the end-to-end door suite and the dead-letter replay test.
 */
export type Convention = "genai" | "openllmetry" | "openinference";
/** OTLP/HTTP in protobuf or JSON (`url`: the /v1/* URL), or OTLP/gRPC (`url`: http://host:port). */
export type OtlpEncoding = "protobuf" | "json" | "grpc";

/** The SDK's own exporters for `encoding`, authenticated with `credential`. */
export function otlpExporters(encoding: OtlpEncoding, credential: string, traceUrl: string, logUrl = traceUrl) {
  if (encoding === "grpc") {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${credential}`);
    const config = { url: traceUrl, metadata, credentials: credentials.createInsecure() };
    return { traces: new GrpcTraceExporter(config), logs: new GrpcLogExporter({ ...config, url: logUrl }) };
  }
  const headers = { Authorization: `Bearer ${credential}` };
  const spans = { url: traceUrl, headers };
  const logs = { url: logUrl, headers };
  return encoding === "protobuf"
    ? { traces: new ProtoTraceExporter(spans), logs: new ProtoLogExporter(logs) }
    : { traces: new JsonTraceExporter(spans), logs: new JsonLogExporter(logs) };
}
export type Provider = "openai" | "anthropic" | "gemini" | "bedrock";

export interface ModelCall {
  sessionId: string;
  system: string;
  user: string;
  answer: string;
  inputTokens: number;
  outputTokens: number;
}

/** Each provider's model, how the conventions name the provider, and its price (USD per million). */
export const PROVIDERS: Record<
  Provider,
  { model: string; genai: string; legacy: string; input: number; output: number }
> = {
  openai: { model: "gpt-4o-mini", genai: "openai", legacy: "OpenAI", input: 0.15, output: 0.6 },
  anthropic: { model: "claude-sonnet-4-20250514", genai: "anthropic", legacy: "Anthropic", input: 3, output: 15 },
  gemini: { model: "gemini-2.5-flash", genai: "gcp.gemini", legacy: "gemini", input: 0.3, output: 2.5 },
  bedrock: {
    model: "us.anthropic.claude-sonnet-4-20250514-v1:0",
    genai: "aws.bedrock",
    legacy: "bedrock",
    input: 3,
    output: 15,
  },
};

/** What the call costs at the public price (no cache parts in these calls). */
export const expectedCost = (provider: Provider, call: Pick<ModelCall, "inputTokens" | "outputTokens">) =>
  (call.inputTokens * PROVIDERS[provider].input + call.outputTokens * PROVIDERS[provider].output) / 1_000_000;

/** The span's name and attributes for one chat call in `convention`. */
export function modelCallSpan(convention: Convention, provider: Provider, call: ModelCall) {
  const p = PROVIDERS[provider];
  if (convention === "genai")
    return {
      name: `chat ${p.model}`,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": p.genai,
        "gen_ai.request.model": p.model,
        "gen_ai.response.model": p.model,
        "gen_ai.response.id": `resp-${call.sessionId}`,
        "gen_ai.conversation.id": call.sessionId,
        "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: call.system }]),
        "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: call.user }] }]),
        "gen_ai.output.messages": JSON.stringify([
          { role: "assistant", parts: [{ type: "text", content: call.answer }], finish_reason: "stop" },
        ]),
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": call.inputTokens,
        "gen_ai.usage.output_tokens": call.outputTokens,
      } satisfies Attributes,
    };
  if (convention === "openllmetry")
    return {
      name: `${provider}.chat`,
      attributes: {
        "llm.request.type": "chat",
        "gen_ai.system": p.legacy,
        "gen_ai.request.model": p.model,
        "gen_ai.response.model": p.model,
        "traceloop.association.properties.session_id": call.sessionId,
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": call.system,
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": call.user,
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": call.answer,
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.usage.prompt_tokens": call.inputTokens,
        "gen_ai.usage.completion_tokens": call.outputTokens,
      } satisfies Attributes,
    };
  return {
    name: "ChatCompletion",
    attributes: {
      "openinference.span.kind": "LLM",
      "llm.provider": p.legacy.toLowerCase(),
      "llm.model_name": p.model,
      "session.id": call.sessionId,
      "llm.input_messages.0.message.role": "system",
      "llm.input_messages.0.message.content": call.system,
      "llm.input_messages.1.message.role": "user",
      "llm.input_messages.1.message.content": call.user,
      "llm.output_messages.0.message.role": "assistant",
      "llm.output_messages.0.message.content": call.answer,
      "llm.token_count.prompt": call.inputTokens,
      "llm.token_count.completion": call.outputTokens,
      "llm.token_count.total": call.inputTokens + call.outputTokens,
    } satisfies Attributes,
  };
}

/**
 * Exports `spans` with the SDK's own OTLP exporter (HTTP protobuf or JSON, or gRPC) through a batch
 * processor (one request for up to 512 spans) and resolves once the export is done, with how
 * many spans ingest refused in a partial success (the exporter reports those only to its
 * diagnostic logger). Throws when the exporter reported a failure.
 */
export async function exportSpans(opts: {
  url: string;
  credential: string;
  encoding: OtlpEncoding;
  serviceName: string;
  spans: Array<{ name: string; attributes: Attributes }>;
}): Promise<{ rejected: number }> {
  let rejected = 0;
  const quiet = () => {};
  diag.setLogger(
    {
      warn: (message: string, details?: unknown) => {
        if (message.startsWith("Received Partial Success"))
          rejected += Number(JSON.parse(String(details)).rejectedSpans ?? 0);
      },
      error: quiet,
      info: quiet,
      debug: quiet,
      verbose: quiet,
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const exporter = otlpExporters(opts.encoding, opts.credential, opts.url).traces;
  let failure: unknown;
  const original = exporter.export.bind(exporter);
  exporter.export = (items, done) =>
    original(items, (result) => {
      if (result.code !== 0) failure = result.error ?? new Error("export failed");
      done(result);
    });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": opts.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("cellar-e2e");
  const end = Date.now();
  for (const s of opts.spans) {
    const span = tracer.startSpan(s.name, { kind: SpanKind.CLIENT, attributes: s.attributes, startTime: end - 900 });
    span.end(end);
  }
  // A failed export rejects the flush with every processor's errors: the exporter's own is thrown.
  const flushFailure = await provider.forceFlush().then(
    () => undefined,
    (err: unknown) => err,
  );
  await provider.shutdown();
  diag.disable();
  if (failure ?? flushFailure) throw failure ?? flushFailure;
  return { rejected };
}

/**
 * A model call the way `@opentelemetry/instrumentation-openai` reports it: a span with usage and
 * no messages, and the messages as log records in the span's context (`gen_ai.system.message`,
 * `gen_ai.user.message`, `gen_ai.choice`), exported through `/v1/logs` (or gRPC) in `encoding` by the SDK's
 * own log exporter. The call's session is its OTLP trace id (no session attribute): returned.
 */
export async function exportCallWithMessageLogs(opts: {
  baseUrl: string;
  credential: string;
  encoding: OtlpEncoding;
  serviceName: string;
  call: ModelCall;
}): Promise<string> {
  const resource = resourceFromAttributes({ "service.name": opts.serviceName });
  const exporters =
    opts.encoding === "grpc"
      ? otlpExporters("grpc", opts.credential, opts.baseUrl)
      : otlpExporters(opts.encoding, opts.credential, `${opts.baseUrl}/v1/traces`, `${opts.baseUrl}/v1/logs`);
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporters.traces)],
  });
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: exporters.logs })],
  });
  const { call } = opts;
  const span = tracerProvider.getTracer("cellar-e2e").startSpan("chat gpt-4o-mini", {
    kind: SpanKind.CLIENT,
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.system": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.response.model": "gpt-4o-mini",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": call.inputTokens,
      "gen_ai.usage.output_tokens": call.outputTokens,
    },
  });
  const logger = loggerProvider.getLogger("cellar-e2e");
  const inSpan = trace.setSpan(context.active(), span);
  const attributes = { "gen_ai.system": "openai" };
  logger.emit({ eventName: "gen_ai.system.message", body: { content: call.system }, attributes, context: inSpan });
  logger.emit({ eventName: "gen_ai.user.message", body: { content: call.user }, attributes, context: inSpan });
  logger.emit({
    eventName: "gen_ai.choice",
    body: { index: 0, finish_reason: "stop", message: { role: "assistant", content: call.answer } },
    attributes,
    context: inSpan,
  });
  span.end();
  await tracerProvider.forceFlush();
  await loggerProvider.forceFlush();
  await tracerProvider.shutdown();
  await loggerProvider.shutdown();
  return span.spanContext().traceId;
}
