import { expect, test } from "bun:test";
import type { OtlpSpan } from "./decode.ts";
import { mapSpans, mapSpansInSteps } from "./map.ts";
import { testSpan } from "./test-span.ts";

const span = testSpan;
const one = (s: OtlpSpan) => {
  const r = mapSpans([s]);
  expect(r.rejected).toBe(0);
  return r.accepted[0].payload as any;
};
const TOOL_ARGS = JSON.stringify({ city: "Oslo" });

test("OpenLLMetry indexed gen_ai.prompt.N / gen_ai.completion.N with tool calls, and old token names", () => {
  const p = one(
    span({
      "llm.request.type": "chat",
      "gen_ai.system": "OpenAI",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "gen_ai.prompt.0.role": "system",
      "gen_ai.prompt.0.content": "Be brief.",
      "gen_ai.prompt.1.role": "user",
      "gen_ai.prompt.1.content": "Weather in Oslo?",
      "gen_ai.completion.0.role": "assistant",
      "gen_ai.completion.0.finish_reason": "tool_calls",
      "gen_ai.completion.0.tool_calls.0.id": "call_1",
      "gen_ai.completion.0.tool_calls.0.name": "weather",
      "gen_ai.completion.0.tool_calls.0.arguments": TOOL_ARGS,
      "gen_ai.usage.prompt_tokens": 20,
      "gen_ai.usage.completion_tokens": 7,
      "session.id": "s-1",
    }),
  );
  expect(p.provider).toBe("openai");
  expect(p.session_id).toBe("s-1");
  expect(p.request.messages).toEqual([
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather in Oslo?" },
  ]);
  expect(p.responses[0].choices[0]).toEqual({
    index: 0,
    finish_reason: "tool_calls",
    message: {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: TOOL_ARGS } }],
    },
  });
  expect(p.responses[0].usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 });
  expect(p.otel.attributes["gen_ai.prompt.0.content"]).toBeUndefined(); // not stored twice
});

test("OpenInference llm.* attributes (Phoenix)", () => {
  const p = one(
    span({
      "openinference.span.kind": "LLM",
      "llm.provider": "anthropic",
      "llm.model_name": "claude-3-5-haiku-20241022",
      "llm.input_messages.0.message.role": "user",
      "llm.input_messages.0.message.content": "hi",
      "llm.output_messages.0.message.role": "assistant",
      "llm.output_messages.0.message.contents.0.message_content.type": "text",
      "llm.output_messages.0.message.contents.0.message_content.text": "hello!",
      "llm.token_count.prompt": 10,
      "llm.token_count.completion": 3,
      "llm.token_count.total": 13,
      "llm.token_count.prompt_details.cache_read": 4,
    }),
  );
  expect(p.provider).toBe("anthropic");
  expect(p.request.model).toBe("claude-3-5-haiku-20241022");
  expect(p.request.messages).toEqual([{ role: "user", content: "hi" }]);
  expect(p.responses[0].choices[0].message).toEqual({ role: "assistant", content: "hello!" });
  expect(p.responses[0].usage).toMatchObject({
    prompt_tokens: 10,
    total_tokens: 13,
    prompt_tokens_details: { cached_tokens: 4 },
  });
});

test("current conventions with Anthropic blocks, system instructions and tool results; Claude's native input count gets the cache added", () => {
  const p = one(
    span({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "aws.bedrock",
      "gen_ai.request.model": "us.anthropic.claude-sonnet-4-20250514-v1:0",
      "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "You are terse." }]),
      "gen_ai.input.messages": JSON.stringify([
        { role: "user", parts: [{ type: "text", content: "Weather in Oslo?" }] },
        { role: "assistant", parts: [{ type: "tool_call", id: "tu_1", name: "weather", arguments: { city: "Oslo" } }] },
        { role: "tool", parts: [{ type: "tool_call_response", id: "tu_1", response: "3°C" }] },
      ]),
      "gen_ai.output.messages": JSON.stringify([
        {
          role: "assistant",
          parts: [
            { type: "reasoning", content: "easy" },
            { type: "text", content: "3°C in Oslo." },
          ],
          finish_reason: "stop",
        },
      ]),
      // Anthropic's own counts: 50 new input tokens, 2,000 read from cache, 300 written.
      "gen_ai.usage.input_tokens": 50,
      "gen_ai.usage.cache_read.input_tokens": 2000,
      "gen_ai.usage.cache_creation.input_tokens": 300,
      "gen_ai.usage.output_tokens": 9,
      "gen_ai.usage.reasoning.output_tokens": 2,
    }),
  );
  expect(p.provider).toBe("aws.bedrock");
  expect(p.request.messages).toEqual([
    { role: "system", content: "You are terse." },
    { role: "user", content: "Weather in Oslo?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "tu_1", type: "function", function: { name: "weather", arguments: TOOL_ARGS } }],
    },
    { role: "tool", tool_call_id: "tu_1", content: "3°C" },
  ]);
  expect(p.responses[0].choices[0]).toEqual({
    index: 0,
    finish_reason: "stop",
    message: { role: "assistant", content: "3°C in Oslo.", reasoning_content: "easy" },
  });
  expect(p.responses[0].usage).toEqual({
    prompt_tokens: 2350,
    completion_tokens: 9,
    total_tokens: 2359,
    prompt_tokens_details: { cached_tokens: 2000, cache_creation_tokens: 300 },
    completion_tokens_details: { reasoning_tokens: 2 },
  });
});

test("provider-native shapes inside the messages: Gemini parts and Bedrock Converse blocks", () => {
  const gemini = one(
    span({
      "gen_ai.operation.name": "generate_content",
      "gen_ai.system": "vertex_ai",
      "gen_ai.request.model": "gemini-2.5-flash",
      "gen_ai.input.messages": JSON.stringify([
        { role: "user", parts: [{ text: "Weather in Oslo?" }] },
        { role: "model", parts: [{ functionCall: { name: "weather", args: { city: "Oslo" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "weather", response: { temp: 3 } } }] },
      ]),
    }),
  );
  expect(gemini.provider).toBe("gcp.vertex_ai");
  expect(gemini.request.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool"]);
  expect(gemini.request.messages[1].tool_calls[0].function).toEqual({ name: "weather", arguments: TOOL_ARGS });
  expect(gemini.request.messages[2]).toMatchObject({
    role: "tool",
    tool_call_id: "weather",
    content: JSON.stringify({ temp: 3 }),
  });
  const bedrock = one(
    span({
      "gen_ai.operation.name": "chat",
      "gen_ai.system": "aws.bedrock",
      "gen_ai.request.model": "mistral.mistral-large-2407-v1:0",
      "gen_ai.input.messages": JSON.stringify([
        { role: "user", content: [{ text: "hi" }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "t1", name: "weather", input: { city: "Oslo" } } }] },
        { role: "user", content: [{ toolResult: { toolUseId: "t1", content: [{ text: "3°C" }] } }] },
      ]),
    }),
  );
  expect(bedrock.request.messages).toEqual([
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "t1", type: "function", function: { name: "weather", arguments: TOOL_ARGS } }],
    },
    { role: "tool", tool_call_id: "t1", content: "3°C" },
  ]);
});

test("deprecated span events: gen_ai.content.prompt / gen_ai.content.completion", () => {
  const p = one(
    span(
      { "gen_ai.system": "mistral_ai", "gen_ai.request.model": "mistral-small-latest" },
      {
        events: [
          {
            name: "gen_ai.content.prompt",
            timeUnixNano: "1",
            attributes: { "gen_ai.prompt": JSON.stringify([{ role: "user", content: "hi" }]) },
          },
          {
            name: "gen_ai.content.completion",
            timeUnixNano: "2",
            attributes: { "gen_ai.completion": JSON.stringify([{ role: "assistant", content: "hello" }]) },
          },
        ],
      },
    ),
  );
  expect(p.provider).toBe("mistral_ai");
  expect(p.request.messages).toEqual([{ role: "user", content: "hi" }]);
  expect(p.responses[0].choices[0].message).toEqual({ role: "assistant", content: "hello" });
});

test("session: gen_ai.conversation.id, else session.id, else the trace id; a conversation id on another span of the trace applies", () => {
  const base = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o" };
  expect(one(span({ ...base, "gen_ai.conversation.id": "c", "session.id": "s" })).session_id).toBe("c");
  expect(one(span(base)).session_id).toBe("ab".repeat(16));
  const agent = span(
    { "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-9" },
    { spanId: "ef".repeat(8) },
  );
  const r = mapSpans([span(base), agent]);
  expect(r.accepted.map((a) => (a.payload as any).session_id)).toEqual(["conv-9", "conv-9"]);
  expect((r.accepted[1].payload as any).name).toBe("gen_ai.invoke_agent");
});

test("execute_tool spans become events carrying the call id, arguments and result", () => {
  const r = mapSpans([
    span({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "weather",
      "gen_ai.tool.call.id": "call_1",
      "gen_ai.tool.call.arguments": TOOL_ARGS,
      "gen_ai.tool.call.result": "3°C",
    }),
  ]);
  expect(r.accepted[0].payload).toMatchObject({
    name: "gen_ai.execute_tool",
    timestamp: "2025-10-09T08:53:20.000Z",
    attributes: { "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": { city: "Oslo" }, duration_ms: 2000 },
  });
});

test("cached tokens: the conventions' rule (input includes them) unless the instrumentation is known to leave them out", () => {
  const usage = (provider: string, model: string, scope: OtlpSpan["scope"] = { name: null, version: null }) =>
    one(
      span(
        {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": provider,
          "gen_ai.request.model": model,
          "gen_ai.usage.input_tokens": 3000,
          "gen_ai.usage.cache_read.input_tokens": 2000,
          "gen_ai.usage.output_tokens": 10,
        },
        { scope },
      ),
    ).responses[0].usage;
  expect(usage("openai", "gpt-4o").prompt_tokens).toBe(3000);
  // An unknown instrumentation of Anthropic follows the conventions: no double count.
  expect(usage("anthropic", "claude-sonnet-4-5").prompt_tokens).toBe(3000);
  expect(usage("aws.bedrock", "amazon.nova-pro-v1:0").prompt_tokens).toBe(3000);
  // OpenLLMetry JS up to 0.27.0 copies Anthropic's own count, which leaves the cache out.
  const old = { name: "@traceloop/instrumentation-anthropic", version: "0.27.0" };
  expect(usage("anthropic", "claude-sonnet-4-5", old).prompt_tokens).toBe(5000);
  expect(usage("anthropic", "claude-sonnet-4-5", { ...old, version: "0.28.0" }).prompt_tokens).toBe(3000);
  // OpenInference's prompt count (Python, JS openai) already includes its cache details.
  const oi = one(
    span({
      "openinference.span.kind": "LLM",
      "llm.provider": "anthropic",
      "llm.model_name": "claude-sonnet-4-5",
      "llm.token_count.prompt": 3000,
      "llm.token_count.prompt_details.cache_read": 2000,
    }),
  );
  expect(oi.responses[0].usage.prompt_tokens).toBe(3000);
});

test("per-message span events and the inference details event with structured (AnyValue) messages", () => {
  const perMessage = one(
    span(
      { "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o" },
      {
        events: [
          { name: "gen_ai.system.message", timeUnixNano: "1", attributes: { content: "Be brief." } },
          { name: "gen_ai.user.message", timeUnixNano: "2", attributes: { content: "Weather in Oslo?" } },
          {
            name: "gen_ai.choice",
            timeUnixNano: "3",
            attributes: {
              index: 0,
              finish_reason: "tool_calls",
              message: JSON.stringify({
                tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: TOOL_ARGS } }],
              }),
            },
          },
        ],
      },
    ),
  );
  expect(perMessage.request.messages).toEqual([
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather in Oslo?" },
  ]);
  expect(perMessage.responses[0].choices[0]).toEqual({
    index: 0,
    finish_reason: "tool_calls",
    message: {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: TOOL_ARGS } }],
    },
  });

  const details = one(
    span(
      {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "gcp.gemini",
        "gen_ai.request.model": "gemini-2.5-pro",
      },
      {
        events: [
          {
            name: "gen_ai.client.inference.operation.details",
            timeUnixNano: "1",
            attributes: {
              "gen_ai.input.messages": [{ role: "user", parts: [{ type: "text", content: "hi" }] }],
              "gen_ai.output.messages": [
                { role: "assistant", parts: [{ type: "text", content: "hello" }], finish_reason: "stop" },
              ],
            },
          },
        ],
      },
    ),
  );
  expect(details.request.messages).toEqual([{ role: "user", content: "hi" }]);
  expect(details.responses[0].choices).toEqual([
    { index: 0, finish_reason: "stop", message: { role: "assistant", content: "hello" } },
  ]);
  expect(details.otel.messages).toBe("span");
});

test("provider names: old gen_ai.system values and other spellings map to the conventions' names", () => {
  const provider = (system: string, model = "some-model") =>
    one(span({ "gen_ai.operation.name": "chat", "gen_ai.system": system, "gen_ai.request.model": model })).provider;
  expect(provider("az.ai.openai", "gpt-4o")).toBe("azure.ai.openai");
  expect(provider("Azure")).toBe("azure.ai.openai");
  expect(provider("vertex_ai")).toBe("gcp.vertex_ai");
  expect(provider("gemini")).toBe("gcp.gemini");
  expect(provider("MistralAI")).toBe("mistral_ai");
  expect(provider("Anthropic")).toBe("anthropic");
  expect(provider("aws.bedrock")).toBe("aws.bedrock");
  // No provider attribute at all: guessed from the model.
  expect(one(span({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-haiku-4-5" })).provider).toBe(
    "anthropic",
  );
  expect(
    one(span({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "us.anthropic.claude-sonnet-4-20250514-v1:0" }))
      .provider,
  ).toBe("aws.bedrock");
});

test("mapSpansInSteps yields once per span and maps exactly as mapSpans (issue 41: an ingest host maps in slices)", () => {
  const spans = Array.from({ length: 120 }, (_, i) =>
    span(
      {
        "gen_ai.operation.name": i % 3 ? "chat" : "execute_tool",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.system": "openai",
      },
      { spanId: (i + 1).toString(16).padStart(16, "0") },
    ),
  );
  const steps = mapSpansInSteps(spans);
  let yields = 0;
  let next = steps.next();
  for (; !next.done; next = steps.next()) yields++;
  expect(yields).toBe(120);
  expect(next.value).toEqual(mapSpans(spans));
  expect(next.value.accepted.length).toBe(120);
});
