import { expect, test } from "bun:test";
import { canonicalModel, costOf, priceFor, PRICE_TABLE_VERSION } from "@cellar/shared/pricing/table";
import { analyzeSession } from "./session.ts";
import { assistant, event, toolResult, trace, user } from "../../../../test/fixtures/analysis-history.ts";

test("price book: dated snapshots resolve to their model's entry; unknown models are null", () => {
  expect(canonicalModel("gpt-4o-mini-2024-07-18")).toBe("gpt-4o-mini");
  expect(canonicalModel("gpt-4o-2024-08-06")).toBe("gpt-4o");
  expect(canonicalModel("gpt-4o-2024-05-13")).toBe("gpt-4o-2024-05-13"); // priced differently
  expect(canonicalModel("llama-3-70b")).toBeNull();
  expect(costOf("llama-3-70b", { promptTokens: 10, completionTokens: 10, cachedTokens: 0 })).toBeNull();
  // o3's price changed on 2025-06-10: the call date picks the price.
  expect(priceFor("o3", new Date("2025-05-01"))!.input).toBe(10);
  expect(priceFor("o3", new Date("2025-07-01"))!.input).toBe(2);
});

test("cost uses the cached-input price for cached prompt tokens", () => {
  // gpt-4o-mini: input 0.15, cached 0.075, output 0.60 per 1M.
  const usage = { promptTokens: 1_000_000, completionTokens: 1_000_000, cachedTokens: 400_000 };
  expect(costOf("gpt-4o-mini-2024-07-18", usage)).toBeCloseTo(0.6 * 0.15 + 0.4 * 0.075 + 0.6, 10);
  expect(costOf("gpt-4o-mini", { ...usage, cachedTokens: 0 })).toBeCloseTo(0.15 + 0.6, 10);
  // No cached discount on gpt-4: cached tokens billed as input.
  expect(costOf("gpt-4-0613", { promptTokens: 1000, completionTokens: 0, cachedTokens: 1000 })).toBeCloseTo(0.03, 10);
});

test("session metrics: tokens (cached, reasoning), latency percentiles, cost by model, tool costs, errors, finish reasons", () => {
  const call = assistant(null, [{ id: "c1", name: "search", args: { q: 1 } }]);
  const usage1 = {
    prompt_tokens: 1000,
    completion_tokens: 100,
    total_tokens: 1100,
    prompt_tokens_details: { cached_tokens: 500 },
  };
  const usage2 = {
    prompt_tokens: 2000,
    completion_tokens: 300,
    total_tokens: 2300,
    completion_tokens_details: { reasoning_tokens: 200 },
  };
  const t1 = trace({
    at: 0,
    durationMs: 1000,
    messages: [user("q")],
    responses: [{ message: call, finish: "tool_calls", usage: usage1 }],
  });
  const t2 = trace({
    at: 2,
    durationMs: 3000,
    messages: [user("q"), call, toolResult("c1", "r")],
    responses: [{ message: assistant("a"), usage: usage2 }],
  });
  const t3 = trace({
    at: 6,
    durationMs: 500,
    model: "mystery-model",
    messages: [user("q"), call, toolResult("c1", "r"), assistant("a"), user("q2")],
    responses: [{ message: assistant("b"), model: "mystery-model" }],
  });
  const a = analyzeSession([t1, t2, t3], [event({ at: 7, name: "boom", severity: 18 })]);
  expect(a.metrics).toMatchObject({
    turns: 2,
    traces: 3,
    events: 1,
    modelCalls: 3,
    toolCalls: 1,
    toolResults: 1,
    errors: 1,
    promptTokens: 3100,
    completionTokens: 420,
    totalTokens: 3520,
    cachedTokens: 500,
    reasoningTokens: 200,
    latencyP50Ms: 1000,
    latencyP95Ms: 3000,
    latencyMaxMs: 3000,
    durationMs: 7000,
    costUsd: null,
    costComplete: false,
    unpricedModels: ["mystery-model"],
    unpricedCalls: { "mystery-model": 1 },
    finishReasons: { tool_calls: 1, stop: 2 },
    priceTableVersion: PRICE_TABLE_VERSION,
  });
  const mini1 = (500 * 0.15 + 500 * 0.075 + 100 * 0.6) / 1e6;
  const mini2 = (2000 * 0.15 + 300 * 0.6) / 1e6;
  expect(a.metrics.pricedCostUsd).toBeCloseTo(mini1 + mini2, 10);
  const byModel = Object.fromEntries(a.costByModel.map((c) => [c.model, c]));
  expect(byModel["gpt-4o-mini"]).toMatchObject({ calls: 2, priced: true, cachedTokens: 500, reasoningTokens: 200 });
  expect(byModel["gpt-4o-mini"].costUsd).toBeCloseTo(mini1 + mini2, 10);
  expect(byModel["mystery-model"]).toMatchObject({ calls: 1, priced: false, costUsd: null, unpricedCalls: 1 });
  expect(byModel["mystery-model"].note).toContain('unknown model "mystery-model"');
  expect(byModel["mystery-model"].note).toContain("unknown model");
  // The call that requested `search` and the call that consumed its result.
  expect(a.toolCosts).toEqual([
    {
      toolName: "search",
      calls: 1,
      modelCalls: 2,
      promptTokens: 3000,
      completionTokens: 400,
      totalTokens: 3400,
      costUsd: expect.closeTo(mini1 + mini2, 10),
    },
  ]);
});

test("extractive TL;DR says what was asked, what happened and how it ended", () => {
  const t1 = trace({
    at: 0,
    messages: [user("Can you reset my password?")],
    responses: [
      {
        message: assistant("Done, check your inbox."),
        usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
      },
    ],
  });
  const a = analyzeSession([t1], []);
  expect(a.tldr).toContain('User asked: "Can you reset my password?"');
  expect(a.tldr).toContain("1 turn, 1 model call, 0 tool calls, 60 tokens");
  expect(a.tldr).toContain('Ended with: "Done, check your inbox." (stop)');
});

test("the analysis is the same whether the history comes whole or interleaved page by page", async () => {
  const { SessionAnalyzer } = await import("./session.ts");
  const call = assistant(null, [{ id: "c1", name: "search", args: { q: 1 } }]);
  const traces = [
    trace({ at: 0, messages: [user("find")], responses: [{ message: call, finish: "tool_calls" }] }),
    trace({
      at: 4,
      messages: [user("find"), call, toolResult("c1", "r")],
      responses: [{ message: assistant("found") }],
    }),
  ];
  const events = [event({ at: 2, name: "tool.start" }), event({ at: 6, name: "boom", severity: 17 })];
  const whole = analyzeSession(traces, events);
  const paged = new SessionAnalyzer();
  paged.addTrace(traces[0]);
  paged.addEvent(events[0]);
  paged.addTrace(traces[1]);
  paged.addEvent(events[1]);
  expect(JSON.stringify(paged.finish())).toBe(JSON.stringify(whole));
});
