import { maturationsOf, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { subjects } from "@cellar/shared/nats/topology";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OpenAIInstrumentation } from "@opentelemetry/instrumentation-openai";
import { OpenAIInstrumentation as TraceloopOpenAIInstrumentation } from "@traceloop/instrumentation-openai";
import { AnthropicInstrumentation as TraceloopAnthropicInstrumentation } from "@traceloop/instrumentation-anthropic";
import { OpenAIInstrumentation as OpenInferenceOpenAIInstrumentation } from "@arizeai/openinference-instrumentation-openai";
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * Real clients nobody here wrote: the OpenTelemetry JS SDK and its OTLP exporters, the official
 * `openai` package, and two instrumentations of it (OpenTelemetry's own, which logs the messages
 * as per-message events, and OpenLLMetry's, which puts gen_ai.input/output.messages on the span).
 * Only OpenAI's API is faked (msw). A scripted two-turn tool-calling conversation must come back
 * as the same transcript, with usage and cost.
 */

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
let server: ReturnType<typeof Bun.serve>;
let base: string;
const require = createRequire(import.meta.url);
// One instance for the file: enable() re-patches a module it has seen, a second instance would not.
// openai is required only after it is first enabled: it hooks require() (CommonJS).
const otelInstrumentation = new OpenAIInstrumentation({ captureMessageContent: true, enabled: false });
let openaiModule: any;

// The model's scripted answers, in order (OpenAI chat.completions wire format).
let script: any[] = [];
const answerFromScript = async () => {
  const next = script.shift();
  if (!next) return HttpResponse.json({ error: { message: "script exhausted" } }, { status: 500 });
  return HttpResponse.json(next);
};
const msw = setupServer(
  http.post("https://api.openai.com/v1/chat/completions", answerFromScript),
  http.post("https://api.anthropic.com/v1/messages", answerFromScript),
);

const reply = (id: string, message: any, finish: string, prompt: number, completion: number) => ({
  id,
  object: "chat.completion",
  created: 1_760_000_000,
  model: "gpt-4o-mini-2024-07-18",
  choices: [{ index: 0, message: { refusal: null, ...message }, finish_reason: finish, logprobs: null }],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});
const weatherCall = (id: string, city: string) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city }) } }],
});
const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "get_weather",
      description: "Current weather",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

/** The app under observation: a loop that runs tools until the model answers, over two user turns. */
async function converse(client: any): Promise<void> {
  script = [
    reply("chatcmpl-1", weatherCall("call_paris", "Paris"), "tool_calls", 50, 10),
    reply("chatcmpl-2", { role: "assistant", content: "It is 18°C and sunny in Paris." }, "stop", 80, 12),
    reply("chatcmpl-3", weatherCall("call_rome", "Rome"), "tool_calls", 100, 10),
    reply("chatcmpl-4", { role: "assistant", content: "Rome: 24°C, clear skies." }, "stop", 130, 12),
  ];
  const weather: Record<string, string> = { Paris: "18°C, sunny", Rome: "24°C, clear" };
  const messages: any[] = [{ role: "system", content: "You are a travel assistant." }];
  for (const question of ["What's the weather in Paris?", "And in Rome?"]) {
    messages.push({ role: "user", content: question });
    for (;;) {
      const res = await client.chat.completions.create({ model: "gpt-4o-mini", messages, tools: TOOLS });
      const msg = res.choices[0].message;
      messages.push({
        role: "assistant",
        content: msg.content,
        ...(msg.tool_calls ? { tool_calls: msg.tool_calls } : {}),
      });
      if (!msg.tool_calls?.length) break;
      for (const call of msg.tool_calls)
        messages.push({
          role: "tool",
          tool_call_id: call.id,
          content: weather[JSON.parse(call.function.arguments).city],
        });
    }
  }
}

const EXPECTED = [
  ["system", "You are a travel assistant."],
  ["user", "What's the weather in Paris?"],
  ["tool_call", JSON.stringify({ city: "Paris" })],
  ["tool_result", "18°C, sunny"],
  ["assistant", "It is 18°C and sunny in Paris."],
  ["user", "And in Rome?"],
  ["tool_call", JSON.stringify({ city: "Rome" })],
  ["tool_result", "24°C, clear"],
  ["assistant", "Rome: 24°C, clear skies."],
];
// gpt-4o-mini: $0.15 input, $0.60 output per million tokens; 360 prompt + 44 completion tokens.
const EXPECTED_COST = (360 * 0.15 + 44 * 0.6) / 1_000_000;

async function completeTranscript(service: string, sessionId: string) {
  return waitFor(
    async () => {
      const r = await stack.platformRequest(
        `/telemetry/otel/sessions/${service}/${encodeURIComponent(sessionId)}/transcript`,
        { token: tenant.platformKey },
      );
      if (r.status !== 200) return null;
      const body = await r.json();
      return body.status === "complete" ? body : null;
    },
    { what: `a complete transcript for ${sessionId}`, timeoutMs: 30_000 },
  );
}

async function sessionMetrics(service: string, sessionId: string) {
  const r = await stack.platformRequest(`/telemetry/metrics/session/${service}/${encodeURIComponent(sessionId)}`, {
    token: tenant.platformKey,
  });
  expect(r.status).toBe(200);
  return (await r.json()).metrics;
}

/** The conversation came back whole: the transcript, four calls, the tokens and the cost. */
async function expectConversation(
  sessionId: string,
  usage: { promptTokens: number; completionTokens: number; costUsd: number },
) {
  const transcript = await completeTranscript("travel-bot", sessionId);
  expect(transcript.items.filter((i: any) => i.type !== "event").map((i: any) => [i.type, i.content])).toEqual(
    EXPECTED,
  );
  const metrics = await sessionMetrics("travel-bot", sessionId);
  expect(metrics).toMatchObject({
    modelCalls: 4,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
  });
  expect(metrics.costUsd).toBeCloseTo(usage.costUsd, 12);
  return transcript;
}

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  // One-trace history pages: every multi-call session is streamed page by page, so the message
  // log records must join their calls across pages (docs/maturation.md, "Bounded memory").
  await stack.startProcessor({
    maturation: {
      historyPaging: {
        traceBytesPerPage: 1,
        tracesPerPage: 1,
        jsonBytesPerPage: 1,
        tracesPerBatch: 1,
        eventsPerPage: 1,
      },
    },
  });
  tenant = await bootstrapTenant(stack.database.db, { name: "otel-co" });
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => stack.ingest.handle(req) });
  base = `http://127.0.0.1:${server.port}`;
  msw.listen({ onUnhandledRequest: "bypass" });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(async () => {
  msw.close();
  context.disable();
  server.stop(true);
  await stack.stop();
});

/** Runs the conversation under OpenTelemetry's openai instrumentation; returns the trace id. */
async function withOtelInstrumentation(
  sessionAttributes: Record<string, string>,
  batchSpans: boolean,
): Promise<string> {
  const resource = resourceFromAttributes({ "service.name": "travel-bot", "deployment.environment.name": "staging" });
  const headers = { Authorization: `Bearer ${tenant.telemetryKey}` };
  const spanExporter = new ProtoTraceExporter({ url: `${base}/v1/traces`, headers });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [batchSpans ? new BatchSpanProcessor(spanExporter) : new SimpleSpanProcessor(spanExporter)],
  });
  // Production setups batch log records; the order of a call's messages (all in one millisecond)
  // is their order in the export request (docs/otlp.md, "Messages as log records").
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: new ProtoLogExporter({ url: `${base}/v1/logs`, headers }) })],
  });
  const instrumentation = otelInstrumentation;
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.setLoggerProvider(loggerProvider);
  instrumentation.enable();
  openaiModule ??= require("openai");
  let traceId = "";
  try {
    const client = new openaiModule.OpenAI({ apiKey: "sk-test" });
    const tracer = tracerProvider.getTracer("travel-bot");
    await tracer.startActiveSpan("conversation", { attributes: sessionAttributes }, async (span) => {
      traceId = span.spanContext().traceId;
      await converse(client);
      span.end();
    });
    await tracerProvider.forceFlush();
    await loggerProvider.forceFlush();
  } finally {
    instrumentation.disable();
    await tracerProvider.shutdown();
    await loggerProvider.shutdown();
  }
  return traceId;
}

test("@opentelemetry/instrumentation-openai + openai, protobuf spans and logs: the conversation comes back as its transcript, with usage and cost", async () => {
  // One user-facing conversation = one trace: with no conversation id, the trace id is the session.
  const traceId = await withOtelInstrumentation({}, false);
  const transcript = await completeTranscript("travel-bot", traceId);
  expect(transcript.items.map((i: any) => [i.type, i.content])).toEqual(EXPECTED);
  const metrics = await sessionMetrics("travel-bot", traceId);
  expect(metrics).toMatchObject({ modelCalls: 4, promptTokens: 360, completionTokens: 44 });
  expect(metrics.costUsd).toBeCloseTo(EXPECTED_COST, 12);
  const [row] = await stack.database
    .sql`select provider, model, environment from traces where session_id = ${traceId} limit 1`;
  expect(row).toEqual({ provider: "openai", model: "gpt-4o-mini", environment: "staging" });
});

test("session.id on the parent span: the message log records (which carry none) still join their calls", async () => {
  const traceId = await withOtelInstrumentation({ "session.id": "sess-linked" }, true);
  const transcript = await completeTranscript("travel-bot", "sess-linked");
  expect(transcript.items.map((i: any) => [i.type, i.content])).toEqual(EXPECTED);
  // The records' own session (named by the trace id) shows none of them.
  const orphan = await completeTranscript("travel-bot", traceId);
  expect(orphan.items).toEqual([]);
});

test("@traceloop/instrumentation-openai (OpenLLMetry) + openai, JSON spans: gen_ai.conversation.id names the session", async () => {
  const resource = resourceFromAttributes({ "service.name": "travel-bot" });
  const headers = { Authorization: `Bearer ${tenant.telemetryKey}` };
  // BatchSpanProcessor: the whole conversation leaves in one OTLP/JSON request.
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new JsonTraceExporter({ url: `${base}/v1/traces`, headers }))],
  });
  const instrumentation = new TraceloopOpenAIInstrumentation({ traceContent: true, enrichTokens: false });
  instrumentation.setTracerProvider(tracerProvider);
  openaiModule ??= require("openai");
  instrumentation.manuallyInstrument(openaiModule.OpenAI);
  try {
    const client = new openaiModule.OpenAI({ apiKey: "sk-test" });
    const tracer = tracerProvider.getTracer("travel-bot");
    await tracer.startActiveSpan(
      "agent",
      { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "trip-42" } },
      async (span) => {
        await converse(client);
        span.end();
      },
    );
    await tracerProvider.forceFlush();
  } finally {
    instrumentation.disable();
    await tracerProvider.shutdown();
  }
  const transcript = await completeTranscript("travel-bot", "trip-42");
  // The agent span is an event item; the rest is the conversation.
  expect(transcript.items.filter((i: any) => i.type === "event").map((i: any) => i.content ?? i.name)).toHaveLength(1);
  expect(transcript.items.filter((i: any) => i.type !== "event").map((i: any) => [i.type, i.content])).toEqual(
    EXPECTED,
  );
  const metrics = await sessionMetrics("travel-bot", "trip-42");
  expect(metrics).toMatchObject({ modelCalls: 4, promptTokens: 360, completionTokens: 44 });
  expect(metrics.costUsd).toBeCloseTo(EXPECTED_COST, 12);
  // The rest of the pipeline as for /raw/*: a TL;DR, and a session.matured message for webhooks.
  const tldr = await (
    await stack.platformRequest("/telemetry/otel/sessions/travel-bot/trip-42/tldr", { token: tenant.platformKey })
  ).json();
  expect(tldr).toMatchObject({ status: "complete", tldr: expect.stringContaining("weather") });
  const matured = await stack.nats.jsm.streams.getMessage(stack.nats.topology.maturedStream, {
    last_by_subj: subjects.matured(stack.nats.topology, "session", tenant.tenantId),
  });
  expect(maturationsOf(matured!.json<MaturedStreamMessage>())[0]).toMatchObject({
    type: "session.matured",
    sessionId: "trip-42",
    serviceName: "travel-bot",
  });
});

/** Anthropic Messages API answers (content blocks, tool_use, usage with its own cache fields). */
const claude = (id: string, content: any[], stop: string, input: number, cacheRead: number, output: number) => ({
  id,
  type: "message",
  role: "assistant",
  model: "claude-haiku-4-5-20251001",
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: {
    input_tokens: input,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: 0,
    output_tokens: output,
  },
});

test("@traceloop/instrumentation-anthropic + @anthropic-ai/sdk: tool_use blocks become the same transcript; Anthropic's cache reads are priced apart", async () => {
  const anthropicModule = require("@anthropic-ai/sdk");
  const resource = resourceFromAttributes({ "service.name": "travel-bot" });
  const headers = { Authorization: `Bearer ${tenant.telemetryKey}` };
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new ProtoTraceExporter({ url: `${base}/v1/traces`, headers }))],
  });
  const instrumentation = new TraceloopAnthropicInstrumentation({ traceContent: true });
  instrumentation.setTracerProvider(tracerProvider);
  instrumentation.manuallyInstrument(anthropicModule);
  // Anthropic's input_tokens leave the cache out: each call read 1,000 cached system-prompt tokens.
  script = [
    claude(
      "msg_1",
      [{ type: "tool_use", id: "toolu_paris", name: "get_weather", input: { city: "Paris" } }],
      "tool_use",
      50,
      1000,
      10,
    ),
    claude("msg_2", [{ type: "text", text: "It is 18°C and sunny in Paris." }], "end_turn", 80, 1000, 12),
    claude(
      "msg_3",
      [{ type: "tool_use", id: "toolu_rome", name: "get_weather", input: { city: "Rome" } }],
      "tool_use",
      100,
      1000,
      10,
    ),
    claude("msg_4", [{ type: "text", text: "Rome: 24°C, clear skies." }], "end_turn", 130, 1000, 12),
  ];
  try {
    const client = new anthropicModule.Anthropic({ apiKey: "sk-ant-test" });
    const tools = [
      {
        name: "get_weather",
        description: "Current weather",
        input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    ];
    const weather: Record<string, string> = { Paris: "18°C, sunny", Rome: "24°C, clear" };
    const tracer = tracerProvider.getTracer("travel-bot");
    await tracer.startActiveSpan("agent", { attributes: { "gen_ai.conversation.id": "claude-trip" } }, async (span) => {
      const messages: any[] = [];
      for (const question of ["What's the weather in Paris?", "And in Rome?"]) {
        messages.push({ role: "user", content: question });
        for (;;) {
          const res = await client.messages.create({
            model: "claude-haiku-4-5",
            max_tokens: 512,
            system: "You are a travel assistant.",
            messages,
            tools,
          });
          messages.push({ role: "assistant", content: res.content });
          const uses = res.content.filter((b: any) => b.type === "tool_use");
          if (!uses.length) break;
          messages.push({
            role: "user",
            content: uses.map((u: any) => ({ type: "tool_result", tool_use_id: u.id, content: weather[u.input.city] })),
          });
        }
      }
      span.end();
    });
    await tracerProvider.forceFlush();
  } finally {
    instrumentation.disable();
    await tracerProvider.shutdown();
  }
  // 360 new + 4,000 cached input tokens, 44 output; claude-haiku-4-5: $1 input, $0.10 cache read, $5 output.
  await expectConversation("claude-trip", {
    promptTokens: 4360,
    completionTokens: 44,
    costUsd: (360 * 1 + 4000 * 0.1 + 44 * 5) / 1_000_000,
  });
  const [row] = await stack.database.sql`select provider, model from traces where session_id = 'claude-trip' limit 1`;
  expect(row).toEqual({ provider: "anthropic", model: "claude-haiku-4-5" });
});

test("OpenInference (@arizeai/openinference-instrumentation-openai, llm.* attributes) + openai: session.id on the parent span", async () => {
  const resource = resourceFromAttributes({ "service.name": "travel-bot" });
  const headers = { Authorization: `Bearer ${tenant.telemetryKey}` };
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new ProtoTraceExporter({ url: `${base}/v1/traces`, headers }))],
  });
  const instrumentation = new OpenInferenceOpenAIInstrumentation({
    instrumentationConfig: { enabled: false },
    tracerProvider,
  });
  openaiModule ??= require("openai");
  instrumentation.manuallyInstrument(openaiModule);
  try {
    const client = new openaiModule.OpenAI({ apiKey: "sk-test" });
    await tracerProvider
      .getTracer("travel-bot")
      .startActiveSpan("chat-session", { attributes: { "session.id": "phoenix-1" } }, async (span) => {
        await converse(client);
        span.end();
      });
    await tracerProvider.forceFlush();
  } finally {
    instrumentation.disable();
    await tracerProvider.shutdown();
  }
  await expectConversation("phoenix-1", { promptTokens: 360, completionTokens: 44, costUsd: EXPECTED_COST });
  const [row] = await stack.database
    .sql`select payload, (select z.payload_z from trace_payloads z where z.trace_pk = traces.id) as payload_z from traces where session_id = 'phoenix-1' limit 1`;
  expect(decodePayload(row as any).otel.scope).toContain("openinference");
});
