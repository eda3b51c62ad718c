import { expect, test } from "bun:test";
import table from "./prices.json" with { type: "json" };
import { checkPriceTable } from "./check.ts";
import { canonicalModel, costOf, PRICES } from "./table.ts";

test("npm run prices:check: the table passes; stale entries are listed, and fail only with --strict", async () => {
  const run = async (...args: string[]) => {
    const p = Bun.spawn(["bun", "run", "scripts/prices-check.ts", ...args], { stdout: "pipe", stderr: "pipe" });
    return { code: await p.exited, out: await new Response(p.stdout).text() };
  };
  const ok = await run("--today", "2026-11-25", "--max-age-days", "100000");
  expect(ok.code).toBe(0);
  expect(ok.out).toContain("0 problems, 0 entries checked more than 100000 days ago");
  const strict = await run("--today", "2030-01-01", "--max-age-days", "30", "--strict");
  expect(strict.code).toBe(1);
  expect(strict.out).toMatch(/STALE {3}gpt-5 \(from 2025-08-07\) checked/);
});

test("shape problems are named: fields, duplicates, providers, dates, and models the folding would hide", () => {
  const good = table.prices[0];
  const report = checkPriceTable(
    {
      version: "2026-11-25",
      providers: table.providers,
      prices: [
        good,
        good,
        { ...good, model: "x-1", source: "pricing page" },
        { ...good, model: "x-2", provider: "acme" },
        { ...good, model: "x-3", checked: "2026-02-30" },
        { ...good, model: "x-4", input: 0 },
        { ...good, model: "x-5", audioInput: "40" },
        { ...good, model: "x-6", price: 1 },
      ],
    },
    { today: "2026-11-25", maxAgeDays: 180 },
  );
  expect(report.problems).toEqual([
    `prices[1] (${good.model}): a second entry for ${good.model}@${good.from}`,
    "prices[2] (x-1): source must be the https URL of the provider's pricing page",
    'prices[3] (x-2): provider "acme" is not listed in providers',
    "prices[4] (x-3): checked must be a YYYY-MM-DD date",
    "prices[5] (x-4): input must be a positive number",
    "prices[5] (x-4): cachedInput above input",
    "prices[6] (x-5): audioInput must be null or a non-negative number",
    "prices[7] (x-6): unknown key price",
  ]);
  const hidden = checkPriceTable(
    { version: "2026-11-25", providers: table.providers, prices: [{ ...good, model: "gpt-4o-audio-preview" }] },
    { today: "2026-11-25", maxAgeDays: 180 },
  );
  expect(hidden.problems).toEqual([
    'gpt-4o-audio-preview: its dated spellings fold past "-preview": name the entry without it',
  ]);
});

test("every provider the issue names is covered", () => {
  const providers = new Set(PRICES.map((p) => p.provider));
  for (const p of ["openai", "anthropic", "gcp.gemini", "aws.bedrock", "mistral_ai"]) expect(providers).toContain(p);
  for (const model of ["nova-pro", "llama3-3-70b-instruct", "mistral-large-2407", "command-r-plus", "gpt-4o-audio"])
    expect(PRICES.some((p) => p.model === model)).toBe(true);
});

test("Bedrock and Vertex id forms resolve to their entries", () => {
  const cases: Array<[string, string]> = [
    ["us.amazon.nova-pro-v1:0", "nova-pro"],
    ["amazon.nova-micro-v1:0", "nova-micro"],
    ["eu.amazon.nova-lite-v1:0", "nova-lite"],
    ["us.amazon.nova-premier-v1:0", "nova-premier"],
    ["anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"],
    ["us.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5"],
    ["meta.llama3-1-70b-instruct-v1:0", "llama3-1-70b-instruct"],
    ["us.meta.llama3-3-70b-instruct-v1:0", "llama3-3-70b-instruct"],
    ["us.meta.llama4-maverick-17b-instruct-v1:0", "llama4-maverick-17b-instruct"],
    ["mistral.mistral-large-2407-v1:0", "mistral-large-2407"],
    ["mistral.mistral-7b-instruct-v0:2", "mistral-7b-instruct"],
    ["mistral.mixtral-8x7b-instruct-v0:1", "mixtral-8x7b-instruct"],
    ["cohere.command-r-plus-v1:0", "command-r-plus"],
    ["cohere.command-text-v14", "command-text"],
    ["amazon.titan-text-express-v1", "titan-text-express"],
    ["ai21.jamba-1-5-large-v1:0", "jamba-1-5-large"],
    ["publishers/google/models/gemini-2.5-flash", "gemini-2.5-flash"],
    ["projects/p/locations/us-central1/publishers/google/models/gemini-3-pro-preview", "gemini-3-pro"],
    ["claude-opus-4-5@20251101", "claude-opus-4-5"],
    ["gemini-1.5-pro-002", "gemini-1.5-pro"],
    ["gpt-4o-audio-preview-2024-12-17", "gpt-4o-audio"],
    ["gpt-4o-mini-realtime-preview", "gpt-4o-mini-realtime"],
    ["gpt-realtime-2025-08-28", "gpt-realtime"],
    ["gpt-5.1-2025-11-13", "gpt-5.1"],
    ["magistral-medium-2509", "magistral-medium"],
  ];
  for (const [id, want] of cases) expect([id, canonicalModel(id)]).toEqual([id, want]);
});

test("audio and reasoning tokens are priced at their own rates where the entry has them", () => {
  // gpt-4o-audio: text $2.50 / $10, audio $40 / $80. 1,000 prompt tokens of which 600 audio; 200 completion, 150 audio.
  expect(
    costOf(
      "gpt-4o-audio-preview",
      { promptTokens: 1_000, cachedTokens: 0, completionTokens: 200, audioInputTokens: 600, audioOutputTokens: 150 },
      new Date("2025-06-01"),
    ),
  ).toBeCloseTo((400 * 2.5 + 600 * 40 + 50 * 10 + 150 * 80) / 1e6, 12);
  // A model without audio rates bills audio tokens as text.
  expect(
    costOf("gpt-4o-mini", { promptTokens: 1_000, cachedTokens: 0, completionTokens: 100, audioInputTokens: 600 }),
  ).toBeCloseTo((1_000 * 0.15 + 100 * 0.6) / 1e6, 12);
  // Gemini 2.5 Flash preview (04-17) billed thinking at $3.50 against $0.60 for other output.
  expect(
    costOf(
      "gemini-2.5-flash-preview-04-17",
      { promptTokens: 1_000, cachedTokens: 0, completionTokens: 500, reasoningTokens: 400 },
      new Date("2025-05-01"),
    ),
  ).toBeCloseTo((1_000 * 0.15 + 100 * 0.6 + 400 * 3.5) / 1e6, 12);
  // Bedrock: Nova Pro with cache reads ($0.80 input, $0.20 cached, $3.20 output).
  expect(
    costOf("us.amazon.nova-pro-v1:0", { promptTokens: 10_000, cachedTokens: 8_000, completionTokens: 100 }),
  ).toBeCloseTo((2_000 * 0.8 + 8_000 * 0.2 + 100 * 3.2) / 1e6, 12);
});
