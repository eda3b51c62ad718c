import { expect, test } from "bun:test";
import { canonicalModel, costOf, priceFor, PRICES } from "./table.ts";

test("every entry carries provider, prices, context window, source and date", () => {
  for (const p of PRICES) {
    expect(p.provider).toBeTruthy();
    expect(p.from).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(p.checked).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(p.source).toMatch(/^https:\/\//);
    expect(p.input).toBeGreaterThan(0);
    expect(p.output).toBeGreaterThan(0);
    expect(p.contextWindow).toBeGreaterThan(0);
  }
});

test("provider spellings fold to one table name", () => {
  expect(canonicalModel("gpt-4o-mini-2024-07-18")).toBe("gpt-4o-mini");
  expect(canonicalModel("openai/gpt-4o")).toBe("gpt-4o");
  expect(canonicalModel("claude-sonnet-4-20250514")).toBe("claude-sonnet-4");
  expect(canonicalModel("us.anthropic.claude-sonnet-4-20250514-v1:0")).toBe("claude-sonnet-4"); // Bedrock
  expect(canonicalModel("anthropic.claude-3-5-haiku-20241022-v1:0")).toBe("claude-3-5-haiku");
  expect(canonicalModel("claude-sonnet-4@20250514")).toBe("claude-sonnet-4"); // Vertex
  expect(canonicalModel("publishers/google/models/gemini-2.5-pro")).toBe("gemini-2.5-pro");
  expect(canonicalModel("gemini-2.0-flash-001")).toBe("gemini-2.0-flash");
  expect(canonicalModel("mistral-large-latest")).toBe("mistral-large");
  expect(canonicalModel("mistral-small-2503")).toBe("mistral-small");
  expect(canonicalModel("my-finetune")).toBeNull();
  expect(canonicalModel("chatgpt-4o-latest")).toBeNull();
});

test("cache reads and writes are priced apart (Anthropic: read 0.1x, write 1.25x)", () => {
  // 1,000 uncached + 8,000 read + 1,000 written input tokens, 500 output, claude-sonnet-4-5.
  const usd = costOf(
    "claude-sonnet-4-5",
    { promptTokens: 10_000, cachedTokens: 8_000, cacheWriteTokens: 1_000, completionTokens: 500 },
    new Date("2025-10-01"),
  );
  expect(usd).toBeCloseTo((1_000 * 3 + 8_000 * 0.3 + 1_000 * 3.75 + 500 * 15) / 1e6, 12);
  // OpenAI: cached tokens are part of the prompt, no write price.
  expect(costOf("gpt-4o-mini", { promptTokens: 1_000, cachedTokens: 400, completionTokens: 100 })).toBeCloseTo(
    (600 * 0.15 + 400 * 0.075 + 100 * 0.6) / 1e6,
    12,
  );
  expect(costOf("unknown-model", { promptTokens: 1, cachedTokens: 0, completionTokens: 1 })).toBeNull();
});

test("dated entries: a call is priced with the entry in force at its time", () => {
  expect(priceFor("o3", new Date("2025-05-01"))!.input).toBe(10);
  expect(priceFor("o3", new Date("2025-07-01"))!.input).toBe(2);
});
