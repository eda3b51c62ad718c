import { afterAll, beforeAll, expect, test } from "bun:test";
import { ANTHROPIC_1H_USAGE } from "@cellar/shared/otlp/test-usage";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { quoteResponse } from "@cellar/shared/pricing/breakdown";
import { DEFAULT_PRICE_BOOK } from "@cellar/shared/pricing/table";
import { Cellar } from "../sdks/typescript/src/index";
import { observeAnthropic } from "../sdks/typescript/src/anthropic";
import { observeOpenAI } from "../sdks/typescript/src/openai";
import { DSN, fakeIngest } from "../sdks/typescript/test/fake-ingest";

// The TypeScript wrappers with the real @anthropic-ai/sdk and openai clients against recorded
// responses (msw): what pricing needs reaches the trace (docs/pricing.md, "Rates"): Anthropic's
// 1-hour cache writes (usage.cache_creation.ephemeral_1h_input_tokens) and its service tier,
// OpenAI's service_tier from a chat stream and from the Responses API. Each trace is priced as
// the processor prices it.
const AT = new Date("2026-11-01T00:00:00Z");
const sse = (events: Array<{ event?: string; data: unknown }>) =>
  new HttpResponse(
    events.map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`).join(""),
    { headers: { "content-type": "text/event-stream" } },
  );

// A Messages response with 1-hour cache writes in a 320k-token prompt (Anthropic's usage shape).
const USAGE = ANTHROPIC_1H_USAGE;
const MESSAGE = {
  id: "msg_01",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [{ type: "text", text: "Done." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: USAGE,
};
const ev = (type: string, data: any) => ({ event: type, data: { type, ...data } });
const CHUNK = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-5-2025-08-07" };

const msw = setupServer(
  http.post("https://api.anthropic.com/v1/messages", async ({ request }) => {
    const body: any = await request.json();
    if (!body.stream) return HttpResponse.json(MESSAGE);
    return sse([
      ev("message_start", {
        message: { ...MESSAGE, content: [], stop_reason: null, usage: { ...USAGE, output_tokens: 1 } },
      }),
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Done." } }),
      ev("content_block_stop", { index: 0 }),
      ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1_000 } }),
      ev("message_stop", {}),
    ]);
  }),
  http.post("https://api.openai.com/v1/chat/completions", () =>
    sse([
      {
        data: {
          ...CHUNK,
          service_tier: "flex",
          choices: [{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }],
        },
      },
      { data: { ...CHUNK, service_tier: "flex", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] } },
      {
        data: {
          ...CHUNK,
          service_tier: "flex",
          choices: [],
          usage: { prompt_tokens: 2_000, completion_tokens: 100, total_tokens: 2_100 },
        },
      },
      { data: "[DONE]" },
    ]),
  ),
  http.post("https://api.openai.com/v1/responses", () =>
    HttpResponse.json({
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      model: "gpt-5-2025-08-07",
      service_tier: "flex",
      output: [
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          content: [{ type: "output_text", text: "Hi", annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 2_000,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 100,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 2_100,
      },
    }),
  ),
);
beforeAll(() => msw.listen({ onUnhandledRequest: "error" }));
afterAll(() => msw.close());

async function traces(call: (clients: { anthropic: Anthropic; openai: OpenAI }) => Promise<void>) {
  const ingest = fakeIngest();
  const cellar = new Cellar({ dsn: DSN, fetch: ingest.fetch, serverless: true });
  await call({
    anthropic: observeAnthropic(new Anthropic({ apiKey: "sk-ant-test", maxRetries: 0 }), cellar, { sessionId: "p" }),
    openai: observeOpenAI(new OpenAI({ apiKey: "sk-test", maxRetries: 0 }), cellar, { sessionId: "p" }),
  });
  await cellar.flush();
  return ingest.items().map((i) => i.body);
}
const quote = (t: any) => quoteResponse(DEFAULT_PRICE_BOOK, t, t.responses[0], AT);

test("Anthropic: the 1-hour cache writes and the tier reach the trace, created or streamed, and are billed at the 1-hour rate", async () => {
  const sent = await traces(async ({ anthropic }) => {
    const params = {
      model: "claude-sonnet-4-6",
      max_tokens: 1024,
      messages: [{ role: "user" as const, content: "Go" }],
    };
    await anthropic.messages.create(params);
    for await (const _ of await anthropic.messages.create({ ...params, stream: true }));
  });
  expect(sent).toHaveLength(2);
  for (const t of sent) {
    expect(t.responses[0].service_tier).toBe("standard");
    expect(t.responses[0].usage).toEqual({
      prompt_tokens: 320_000,
      completion_tokens: 1_000,
      total_tokens: 321_000,
      prompt_tokens_details: {
        cached_tokens: 20_000,
        cache_creation_tokens: 250_000,
        cache_creation_1h_tokens: 200_000,
      },
    });
    const q = quote(t);
    expect(q.lines.map((l) => [l.kind, l.tokens, l.usdPerMillion])).toEqual([
      ["input", 50_000, 6],
      ["cache_read", 20_000, 0.6],
      ["cache_write", 50_000, 7.5],
      ["cache_write_1h", 200_000, 12],
      ["output", 1_000, 22.5],
    ]);
    // Before: the 200k 1-hour writes were billed at the 5-minute rate, $1.50 less.
    expect(q.costUsd).toBeCloseTo(0.3 + 0.012 + 0.375 + 2.4 + 0.0225, 10);
  }
});

test("OpenAI: service_tier from a chat stream and from the Responses API: flex is billed at half", async () => {
  const sent = await traces(async ({ openai }) => {
    const stream = await openai.chat.completions.create({
      model: "gpt-5",
      service_tier: "flex",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Hi" }],
    });
    for await (const _ of stream);
    await openai.responses.create({ model: "gpt-5", service_tier: "flex", input: "Hi" });
  });
  expect(sent).toHaveLength(2);
  for (const t of sent) {
    expect(t.responses[0].service_tier).toBe("flex");
    const q = quote(t);
    expect(q.serviceTier).toBe("flex (x0.5)");
    expect(q.costUsd).toBeCloseTo((2_000 * 0.625 + 100 * 5) / 1e6, 12);
  }
});
