import { expect, test } from "bun:test";
import rootPackage from "../../package.json" with { type: "json" };
import { checkOverrides, diffPrices } from "./check.ts";
import overrides from "./overrides.json" with { type: "json" };
import { SOURCE_VERSION } from "./source.ts";
import { canonicalModel, costOf, createPriceBook, DEFAULT_PRICE_BOOK, priceFor } from "./table.ts";

const at = new Date("2026-11-01T12:00:00Z");

test("the pinned database version is the one the entries cite; overrides.json is well formed", () => {
  expect(rootPackage.dependencies["@pydantic/genai-prices"]).toBe(SOURCE_VERSION);
  expect(checkOverrides(overrides)).toEqual([]);
  expect(
    checkOverrides({ version: "x", standardTiers: [], serviceTiers: [{ provider: "nope", tier: "flex" }] }),
  ).toHaveLength(5);
  expect(diffPrices({ "a/m": { input_mtok: "1" } }, { "a/m": { input_mtok: "2" }, "a/n": {} })).toEqual([
    "~ a/m input_mtok: 1 -> 2",
    "+ a/n",
  ]);
});

test("ids the old table folded onto the wrong entry now get their own price (issue 40)", () => {
  // gpt-4-1106-preview and gpt-4-0125-preview are GPT-4 Turbo (10/30), not gpt-4 (30/60).
  expect(priceFor("gpt-4-1106-preview", at, "openai")).toMatchObject({ input: 10, output: 30 });
  expect(priceFor("gpt-4-0125-preview", at, "openai")).toMatchObject({ input: 10, output: 30 });
  expect(priceFor("gpt-3.5-turbo-1106", at, "openai")).toMatchObject({ input: 1, output: 2 });
  // Current models the old table left unpriced.
  for (const m of ["claude-sonnet-4-6", "claude-opus-4-7", "gpt-5.4-mini", "gemini-3.5-flash"])
    expect(priceFor(m, at)).not.toBeNull();
  expect(priceFor("chatgpt-4o-latest", at, "openai")).toMatchObject({ input: 5, output: 15 });
});

test("provider id forms: Bedrock regional profiles, Vertex ids, prefixed names", () => {
  // A regional profile costs 10% above the global one for Sonnet 4.5 on Bedrock.
  expect(priceFor("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", at, "aws.bedrock")!.input).toBe(3.3);
  expect(priceFor("global.anthropic.claude-sonnet-4-5-20250929-v1:0", at, "aws.bedrock")!.input).toBe(3);
  expect(canonicalModel("claude-sonnet-4@20250514", "gcp.vertex_ai")).toBe("claude-sonnet-4");
  expect(canonicalModel("us.amazon.nova-pro-v1:0")).toBe("nova-pro"); // a Bedrock id names its provider
  expect(canonicalModel("openai/gpt-4o")).toBe("gpt-4o");
  expect(canonicalModel("publishers/google/models/gemini-2.5-pro")).toBe("gemini-2.5-pro");
});

test("an unknown model is unpriced with the reason, never guessed", () => {
  const q = DEFAULT_PRICE_BOOK.quote(
    "acme-finetune-7",
    { promptTokens: 10, completionTokens: 10, cachedTokens: 0 },
    at,
  );
  expect(q.costUsd).toBeNull();
  expect(q.reason).toContain("unknown model");
  expect(DEFAULT_PRICE_BOOK.quote(null, { promptTokens: 1, completionTokens: 1, cachedTokens: 0 }).reason).toBe(
    "no model named on the call",
  );
});

test("breakdown: Claude 1-hour cache writes over 200k prompt tokens use the long-context 1-hour rate", () => {
  const q = DEFAULT_PRICE_BOOK.quote(
    "claude-sonnet-4-5-20250929",
    {
      promptTokens: 300_000,
      cachedTokens: 20_000,
      cacheWriteTokens: 250_000,
      cacheWrite1hTokens: 200_000,
      completionTokens: 1_000,
    },
    at,
    { provider: "anthropic" },
  );
  expect(q.entry).toMatchObject({ id: "anthropic/claude-sonnet-4-5", source: "@pydantic/genai-prices@0.1.8" });
  expect(q.lines.map((l) => [l.kind, l.tokens, l.usdPerMillion, l.tier])).toEqual([
    ["input", 30_000, 6, "prompt > 200000 tokens"],
    ["cache_read", 20_000, 0.6, "prompt > 200000 tokens"],
    ["cache_write", 50_000, 7.5, "prompt > 200000 tokens"],
    ["cache_write_1h", 200_000, 12, "prompt > 200000 tokens"],
    ["output", 1_000, 22.5, "prompt > 200000 tokens"],
  ]);
  expect(q.costUsd).toBeCloseTo(
    q.lines.reduce((n, l) => n + l.usd, 0),
    10,
  );
  // Claude on Bedrock: the database has no 1-hour rate; overrides.json derives it as 2x the entry's
  // own input rate (AWS's price list, and LiteLLM's table for every Bedrock Claude it prices so).
  const bedrock = DEFAULT_PRICE_BOOK.quote(
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    { promptTokens: 1000, cachedTokens: 0, cacheWriteTokens: 500, cacheWrite1hTokens: 400, completionTokens: 1 },
    at,
    { provider: "aws.bedrock" },
  );
  expect(bedrock.lines.map((l) => [l.kind, l.tokens, l.usdPerMillion])).toEqual([
    ["input", 500, 3.3],
    ["cache_write", 100, 4.125],
    ["cache_write_1h", 400, 6.6],
    ["output", 1, 16.5],
  ]);
  expect(bedrock.entry?.source).toContain("1-hour cache-write rate: Cellar's overrides.json");
  // Only a call that used the derived rate cites it.
  const plain = DEFAULT_PRICE_BOOK.quote(
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    { promptTokens: 10, cachedTokens: 0, completionTokens: 1 },
    at,
    { provider: "aws.bedrock" },
  );
  expect(plain.entry?.source).not.toContain("overrides");
  // At any prompt size the derived rate is twice the input line's (tiers scale with it).
  const long = DEFAULT_PRICE_BOOK.quote(
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    {
      promptTokens: 300_000,
      cachedTokens: 0,
      cacheWriteTokens: 100_000,
      cacheWrite1hTokens: 100_000,
      completionTokens: 1,
    },
    at,
    { provider: "aws.bedrock" },
  );
  const rate = (kind: string) => long.lines.find((l) => l.kind === kind)!.usdPerMillion;
  expect(rate("cache_write_1h")).toBeCloseTo(2 * rate("input"), 10);
  // Without a 1-hour rate and no rule deriving one the call is unpriced, not under-priced.
  const none = DEFAULT_PRICE_BOOK.quote(
    "gpt-4o",
    { promptTokens: 1000, cachedTokens: 0, cacheWriteTokens: 500, cacheWrite1hTokens: 500, completionTokens: 1 },
    at,
    { provider: "openai" },
  );
  expect(none.costUsd).toBeNull();
  expect(none.reason).toContain("1-hour cache writes");
  // An entry with its own 1-hour rate keeps it (Anthropic's API: 2x input, from the database).
  expect(
    DEFAULT_PRICE_BOOK.quote(
      "claude-sonnet-4-5-20250929",
      { promptTokens: 10, cachedTokens: 0, cacheWriteTokens: 10, cacheWrite1hTokens: 10, completionTokens: 0 },
      at,
    ).entry?.source,
  ).not.toContain("overrides");
});

test("breakdown: Gemini audio input, OpenAI flex tier, unknown service tiers unpriced", () => {
  const audio = DEFAULT_PRICE_BOOK.quote(
    "gemini-2.5-flash",
    { promptTokens: 2_000, cachedTokens: 0, audioInputTokens: 1_500, completionTokens: 100 },
    at,
    { provider: "gcp.gemini" },
  );
  expect(audio.lines.find((l) => l.kind === "input_audio")).toMatchObject({ tokens: 1_500, usdPerMillion: 1 });
  expect(audio.costUsd).toBeCloseTo((500 * 0.3 + 1_500 * 1 + 100 * 2.5) / 1e6, 12);
  const usage = { promptTokens: 2_000, cachedTokens: 1_000, completionTokens: 100 };
  const flex = DEFAULT_PRICE_BOOK.quote("gpt-5", usage, at, { provider: "openai", serviceTier: "flex" });
  const standard = DEFAULT_PRICE_BOOK.quote("gpt-5", usage, at, { provider: "openai", serviceTier: "default" });
  expect(flex.serviceTier).toBe("flex (x0.5)");
  expect(flex.costUsd).toBeCloseTo(standard.costUsd! / 2, 12);
  // OpenAI priority: its factor differs by model (overrides.json modelServiceTiers, from Langfuse's table).
  const priority = DEFAULT_PRICE_BOOK.quote("gpt-5", usage, at, { provider: "openai", serviceTier: "priority" });
  expect(priority.serviceTier).toBe("priority (x2)");
  expect(priority.costUsd).toBeCloseTo(2 * standard.costUsd!, 12);
  const mini = DEFAULT_PRICE_BOOK.quote("gpt-4o-mini", usage, at, { provider: "openai", serviceTier: "priority" });
  expect(mini.lines.map((l) => l.usdPerMillion)).toEqual([0.25, 0.125, 1]); // 0.15 / 0.075 / 0.6 standard
  // A model without a listed factor, or a tier without one, stays unpriced with the reason.
  const unlisted = DEFAULT_PRICE_BOOK.quote("gpt-3.5-turbo", usage, at, {
    provider: "openai",
    serviceTier: "priority",
  });
  expect(unlisted.costUsd).toBeNull();
  expect(unlisted.reason).toContain('service tier "priority"');
  expect(DEFAULT_PRICE_BOOK.quote("gpt-5", usage, at, { provider: "openai", serviceTier: "scale" }).costUsd).toBeNull();
});

test("a tenant's own entry replaces the database's for that model (by id or by the entry it resolves to)", () => {
  const book = createPriceBook([
    {
      provider: "custom",
      model: "gpt-4o",
      from: "1970-01-01",
      input: 1,
      cachedInput: null,
      cacheWrite: null,
      output: 2,
      contextWindow: null,
      source: "negotiated",
      checked: "2026-11-01",
    },
  ]);
  const q = book.quote(
    "gpt-4o-2024-08-06",
    { promptTokens: 1_000_000, cachedTokens: 0, completionTokens: 1_000_000 },
    at,
  );
  expect(q.costUsd).toBe(3);
  expect(q.entry).toMatchObject({ id: "tenant/gpt-4o", source: "negotiated", date: "1970-01-01" });
  expect(costOf("gpt-4o", { promptTokens: 1_000_000, cachedTokens: 0, completionTokens: 0 }, at)).toBe(2.5);
});
