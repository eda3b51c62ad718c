import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { defineIntent } from "@cellar/shared/admin/intents";
import { TRANSCRIPT_ITEM_CAP } from "../apps/processor/src/analysis/session";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const summaryCalls: Array<{ url: string; auth: string | null; body: any }> = [];

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 2, startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme", plan: "pro" });
  await stack.startProcessor({
    summaryLlm: {
      url: "https://llm.test/v1",
      apiKey: "sk-test",
      model: "gpt-4o-mini",
      // The outside world, faked: answers unless the transcript asks it to fail.
      fetch: (async (url: string, init: RequestInit) => {
        const body = JSON.parse(String(init.body));
        summaryCalls.push({ url, auth: new Headers(init.headers).get("authorization"), body });
        if (JSON.stringify(body).includes("please-fail-summary")) return new Response("upstream down", { status: 503 });
        return Response.json({
          choices: [{ message: { role: "assistant", content: "The user asked about weather; the bot answered." } }],
        });
      }) as typeof fetch,
    },
  });
});
afterAll(() => stack.stop());

const send = async (path: "/raw/traces" | "/raw/events", body: unknown) => {
  const r = await stack.ingestRequest(path, body, { authorization: `Bearer ${tenant.telemetryKey}` });
  expect(r.status).toBe(200);
};
const read = async (path: string) => {
  const r = await stack.platformRequest(path, { token: tenant.platformKey });
  expect(r.status).toBe(200);
  return r.json() as Promise<any>;
};
const transcriptPath = (session: string, query = "") =>
  `/telemetry/otel/sessions/support-bot/${session}/transcript${query}`;
const analysisOf = async (session: string) =>
  (
    await stack.database.sql<
      any[]
    >`select a.* from session_analyses a join sessions s on s.id = a.session_pk where s.session_id = ${session}`
  )[0];
const waitMatured = (session: string, count = 1) =>
  waitFor(async () => (await analysisOf(session))?.maturation_count === count, {
    what: `${session} maturation ${count}`,
  });

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  },
};
const call = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_w1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
};
const bigResult = JSON.stringify({ forecast: "sunny ".repeat(300) });

test("multi-turn tool-calling session (2-response payload): processing, complete, lean vs full, paging, item detail, partial", async () => {
  const t0 = Date.now() - 60_000;
  const first = chatTrace({
    sessionId: "weather-1",
    start: new Date(t0),
    durationMs: 2000,
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What's the weather in Paris?" },
    ],
    reply: call,
    finishReason: "tool_calls",
    extra: {
      request: {
        model: "gpt-4o-mini",
        tools: [weatherTool],
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "What's the weather in Paris?" },
        ],
      },
    },
  });
  first.responses.push({
    ...first.responses[0],
    id: "chatcmpl-2",
    choices: [{ index: 0, message: { role: "assistant", content: "Sunny in Paris." }, finish_reason: "stop" }],
  });
  await send("/raw/traces", first);
  await waitFor(
    async () => (await stack.database.sql`select 1 from sessions where session_id = 'weather-1'`).length > 0,
    { what: "session written", intervalMs: 20 },
  );
  const early = await read(transcriptPath("weather-1"));
  expect(early.status).toBe("processing");
  expect(early.items).toEqual([]);
  expect(early.retryAfterSeconds).toBeGreaterThanOrEqual(1);

  await waitMatured("weather-1");
  const second = chatTrace({
    sessionId: "weather-1",
    start: new Date(t0 + 10_000),
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What's the weather in Paris?" },
      call,
      { role: "tool", tool_call_id: "call_w1", content: bigResult },
      { role: "assistant", content: "Sunny in Paris." },
      { role: "user", content: "Thanks" },
    ],
    reply: "You're welcome!",
  });
  await send("/raw/traces", second);
  await waitFor(async () => (await read(transcriptPath("weather-1"))).status === "partial", {
    what: "partial while re-opened",
    intervalMs: 50,
  });
  await waitMatured("weather-1", 2);

  const full = await read(transcriptPath("weather-1", "?content=full"));
  expect(full.status).toBe("complete");
  expect(full.items.map((i: any) => i.type)).toEqual([
    "system",
    "user",
    "tool_call",
    "tool_result",
    "assistant",
    "user",
    "assistant",
  ]);
  expect(full.items[3]).toMatchObject({ content: bigResult, toolName: "get_weather", toolCallId: "call_w1" });
  expect(full.counts.total).toBe(7);
  expect(full.truncated).toBe(false);

  const lean = await read(transcriptPath("weather-1"));
  expect(lean.items[3].content.length).toBeLessThan(bigResult.length);
  expect(lean.items[3].contentLength).toBe(bigResult.length);
  expect(lean.items.map((i: any) => i.id)).toEqual(full.items.map((i: any) => i.id));

  const page = await read(transcriptPath("weather-1", "?limit=2&offset=2&content=full"));
  expect(page.items.map((i: any) => i.id)).toEqual(full.items.slice(2, 4).map((i: any) => i.id));
  expect(page.pagination).toMatchObject({ limit: 2, offset: 2, total: 7 });

  const answer = full.items[4];
  const detail = await read(`/telemetry/otel/sessions/support-bot/weather-1/transcript/items/${answer.id}`);
  expect(detail.item.id).toBe(answer.id);
  expect(detail.spanAttributes).toMatchObject({ "response.index": 1, "gen_ai.response.finish_reasons": ["stop"] });

  // The AI summary is written after the maturation's commit (which resets it to extractive).
  const a = await waitFor(
    async () => {
      const r = await analysisOf("weather-1");
      return r.tldr_source === "llm" && r;
    },
    { what: "weather-1's AI summary after its second maturation" },
  );
  expect(a).toMatchObject({ turns: 2, model_calls: 3, tool_calls: 1, problems: 0, item_count: 7 });
  expect(a.cost_usd).toBeGreaterThan(0);
  expect(a.tool_costs.map((t: any) => [t.toolName, t.calls, t.modelCalls])).toEqual([["get_weather", 1, 2]]);
  expect(a.cost_by_model).toMatchObject([{ model: "gpt-4o-mini", calls: 3, priced: true }]);
  expect(a.tldr_source).toBe("llm");
  expect(a.tldr).toBe("The user asked about weather; the bot answered.");
  const last = summaryCalls.at(-1)!;
  expect(last.url).toBe("https://llm.test/v1/chat/completions");
  expect(last.auth).toBe("Bearer sk-test");

  // Tool schemas: one per service however many times it was sent.
  const schemas = await stack.database.sql`select name from tool_schemas`;
  expect(schemas.map((r) => r.name)).toEqual(["get_weather"]);
});

test("the AI summary falls back to the extractive TL;DR when the endpoint fails", async () => {
  await send(
    "/raw/traces",
    chatTrace({ sessionId: "fail-sum", messages: [{ role: "user", content: "please-fail-summary now" }], reply: "ok" }),
  );
  await waitMatured("fail-sum");
  await new Promise((r) => setTimeout(r, 300)); // the LLM attempt runs after commit
  const a = await analysisOf("fail-sum");
  expect(a.tldr_source).toBe("extractive");
  expect(a.tldr).toContain('User asked: "please-fail-summary now"');
});

test("findings form issues whose counts stay exact across re-maturation", async () => {
  const issue = async () =>
    (
      await stack.database.sql<
        any[]
      >`select occurrences, affected_sessions, detector from issues where detector = 'response_cut_off'`
    )[0];
  const cut = (session: string, start: Date, history: any[] = []) =>
    chatTrace({
      sessionId: session,
      start,
      messages: [...history, { role: "user", content: `write an essay ${start.getTime()}` }],
      reply: "Once upon a",
      finishReason: "length",
    });
  const t0 = Date.now() - 30_000;
  await send("/raw/traces", cut("cut-a", new Date(t0)));
  await waitMatured("cut-a");
  expect(await issue()).toMatchObject({ occurrences: 1, affected_sessions: 1 });

  // Re-open with a clean call: the old finding is replaced, not counted twice.
  await send(
    "/raw/traces",
    chatTrace({
      sessionId: "cut-a",
      start: new Date(t0 + 1000),
      messages: [{ role: "user", content: "hi" }],
      reply: "hello",
    }),
  );
  await waitMatured("cut-a", 2);
  expect(await issue()).toMatchObject({ occurrences: 1, affected_sessions: 1 });

  await send("/raw/traces", cut("cut-a", new Date(t0 + 2000)));
  await waitMatured("cut-a", 3);
  expect(await issue()).toMatchObject({ occurrences: 2, affected_sessions: 1 });

  await send("/raw/traces", cut("cut-b", new Date(t0 + 3000)));
  await waitMatured("cut-b");
  expect(await issue()).toMatchObject({ occurrences: 3, affected_sessions: 2 });
  const findings = await stack.database
    .sql`select session_id, detector, severity, evidence from findings where detector = 'response_cut_off' order by session_id`;
  expect(findings.map((f) => f.session_id)).toEqual(["cut-a", "cut-a", "cut-b"]);
  expect(findings[0].evidence).toMatchObject({ finishReason: "length" });
  expect((await analysisOf("cut-a")).problems).toBe(2);
});

test("intents defined per service match user messages", async () => {
  await defineIntent(stack.database.db, {
    tenantId: tenant.tenantId,
    service: "support-bot",
    name: "refund",
    description: "Wants money back",
    examples: ["I want a refund", "refund my order"],
  });
  await defineIntent(stack.database.db, {
    tenantId: tenant.tenantId,
    service: "support-bot",
    name: "shipping",
    examples: ["where is my package"],
  });
  await send(
    "/raw/traces",
    chatTrace({
      sessionId: "intent-1",
      messages: [{ role: "user", content: "Hi, I want a refund for order 77" }],
      reply: "Sure.",
    }),
  );
  await waitMatured("intent-1");
  const rows = await stack.database.sql`
    select d.name, si.score, si.evidence from session_intents si join intent_definitions d on d.id = si.intent_id
    join sessions s on s.id = si.session_pk where s.session_id = 'intent-1'`;
  expect(rows.map((r) => r.name)).toEqual(["refund"]);
  expect(rows[0].score).toBe(1);
  expect(rows[0].evidence).toMatchObject({ matched: "I want a refund" });
});

test("a session over the item cap is stored up to the cap and marked truncated", async () => {
  const messages = Array.from({ length: TRANSCRIPT_ITEM_CAP + 10 }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: `m${i}`,
  }));
  await send("/raw/traces", chatTrace({ sessionId: "huge-1", messages, reply: "done" }));
  await waitMatured("huge-1");
  const body = await read(transcriptPath("huge-1", "?limit=500&offset=4900"));
  expect(body.truncated).toBe(true);
  expect(body.counts.total).toBe(TRANSCRIPT_ITEM_CAP);
  expect(body.items).toHaveLength(100);
  expect(body.items.at(-1).content).toBe(`m${TRANSCRIPT_ITEM_CAP - 1}`);
});
