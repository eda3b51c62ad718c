// Two independent price tables, every model of one priced by the other (issue 40's proof): the
// book (the @pydantic/genai-prices database, shared/pricing/source.ts) prices every model of
// Langfuse's maintained table (worker/src/constants/default-model-prices.json at commit
// 2b0e9d23a10f, 2026-08-21, MIT: test/fixtures/prices/), default tier, per million tokens, each at
// the date Langfuse last wrote the entry (its `updatedAt`: prices change by date). The
// database's own models are all checked by source.test.ts. A new disagreement (either side
// changed, or the book's matching did) fails here: decide which is right (the provider's pricing
// page decides) and list it below with the reason, or correct it in overrides (docs/pricing.md).
import { expect, test } from "bun:test";
import langfuse from "../../test/fixtures/prices/langfuse-default-model-prices-2026-08-21.json" with { type: "json" };
import overrides from "./overrides.json" with { type: "json" };
import { DEFAULT_PRICE_BOOK, priceFor } from "./table.ts";

/** `model: what differs`, and why the book keeps the database's price. */
export const KEPT_DISAGREEMENTS: Record<string, string> = {
  "gpt-3.5-turbo-0301 input 1.5 vs 2":
    "the database prices the retired 0301 snapshot at $1.50/$2 as OpenAI's later legacy price list did (several independently kept tables copy that list); Langfuse's $2/$2 is the March 2023 launch price. Both are right at some date and neither table dates them; kept: the snapshot was retired in June 2024",
  "gpt-3.5-turbo-16k input 3 vs 0.5":
    "the alias first named the 16k 0613 snapshot ($3/$4), later gpt-3.5-turbo-0125 ($0.5/$1.5): the database keeps the snapshot's price; a caller sending the bare alias today is billed $0.5/$1.5 (left as is: the alias is retired)",
  "gpt-3.5-turbo-16k output 4 vs 1.5": "as above",
  "gemini-1.5-pro-latest input 1.25 vs 2.5":
    "Google's price after the October 2024 cut is $1.25/$5 up to 128k tokens of prompt and $2.5/$10 above (the database has both tiers); Langfuse's $2.5/$7.5 matches neither tier nor the earlier $3.5/$10.5",
  "gemini-1.5-pro-latest output 5 vs 7.5": "as above",
};

/**
 * Settled by date: each Langfuse model is compared at the day Langfuse last wrote it (`updatedAt`),
 * so a price that changed later is not a disagreement. gpt-5.6-sol was the one such case: the
 * database records OpenAI's cut of 2026-08-21 ($5/$30/$0.5 before, $4/$20/$0.4 from that day, with
 * OpenAI's model page and changelog as its references), and Langfuse's entry was written on
 * 2026-08-20, the day before.
 */
export const SETTLED_BY_DATE = {
  "gpt-5.6-sol": { writtenByLangfuse: "2026-08-20", before: [5, 30, 0.5], from: "2026-08-21", after: [4, 20, 0.4] },
};

const perMillion = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * 1e12) / 1e6);
const same = (a: number | null, b: number | undefined) =>
  b === undefined || a === null || Math.abs(a - b) <= 0.005 * Math.max(a, b) + 1e-12;

test("the book and Langfuse's table agree on every model both price, but for the kept disagreements", () => {
  let agree = 0;
  const differ: string[] = [];
  const unknownToBook: string[] = [];
  for (const m of langfuse as Array<{
    modelName: string;
    updatedAt: string;
    pricingTiers: Array<{ isDefault: boolean; prices: Record<string, number> }>;
  }>) {
    const p = m.pricingTiers.find((t) => t.isDefault)!.prices;
    // The price in force when Langfuse last wrote the entry (prices change by date in the database).
    const mine = priceFor(m.modelName, new Date(m.updatedAt));
    if (!mine) {
      unknownToBook.push(m.modelName);
      continue;
    }
    const theirs = {
      input: perMillion(p.input ?? p.input_tokens ?? p.prompt_tokens),
      output: perMillion(p.output ?? p.output_tokens ?? p.completion_tokens),
      cached: perMillion(p.input_cache_read ?? p.cache_read_input_tokens ?? p.input_cached_tokens),
    };
    const before = differ.length;
    if (!same(mine.input, theirs.input)) differ.push(`${m.modelName} input ${mine.input} vs ${theirs.input}`);
    if (!same(mine.output, theirs.output)) differ.push(`${m.modelName} output ${mine.output} vs ${theirs.output}`);
    if (!same(mine.cachedInput, theirs.cached))
      differ.push(`${m.modelName} cached ${mine.cachedInput} vs ${theirs.cached}`);
    if (differ.length === before) agree++;
  }
  expect(differ.sort()).toEqual(Object.keys(KEPT_DISAGREEMENTS).sort());
  expect(agree).toBeGreaterThanOrEqual(124);
  // Langfuse's models the database does not price are unpriced, visibly (legacy completions,
  // embeddings, PaLM, fine-tune ids): the count moves only with a review of this list.
  expect(unknownToBook.length).toBeLessThanOrEqual(40);
});

test("gpt-5.6-sol: the two tables agree at the date Langfuse wrote it; the database has OpenAI's later cut", () => {
  const s = SETTLED_BY_DATE["gpt-5.6-sol"];
  const at = (d: string) => {
    const p = priceFor("gpt-5.6-sol", new Date(`${d}T12:00:00Z`))!;
    return [p.input, p.output, p.cachedInput];
  };
  expect(at(s.writtenByLangfuse)).toEqual(s.before);
  expect(at(s.from)).toEqual(s.after);
  const theirs = (langfuse as any[]).find((m) => m.modelName === "gpt-5.6-sol");
  expect(theirs.updatedAt.slice(0, 10)).toBe(s.writtenByLangfuse);
});

test("OpenAI priority factors in overrides.json are Langfuse's, model by model (its 'Fast mode' tier over its standard one)", () => {
  const derived: Record<string, Set<number>> = {};
  for (const m of langfuse as any[]) {
    const base = m.pricingTiers.find((t: any) => t.isDefault).prices;
    const fast = m.pricingTiers.find(
      (t: any) =>
        t.conditions?.length === 1 &&
        t.conditions[0].key === "service_tier" &&
        t.conditions[0].values?.includes("priority"),
    );
    if (!fast || !base.input || !base.output) continue;
    const input = fast.prices.input / base.input;
    if (Math.abs(input - fast.prices.output / base.output) > 1e-9) continue; // uneven: left unpriced
    const entry = DEFAULT_PRICE_BOOK.quote(
      m.modelName,
      { promptTokens: 1, cachedTokens: 0, completionTokens: 1 },
      new Date(m.updatedAt),
      {
        provider: "openai",
      },
    ).entry;
    if (!entry?.id.startsWith("openai/")) continue;
    (derived[entry.id.slice("openai/".length)] ??= new Set()).add(Number(input.toPrecision(12)));
  }
  const single = Object.fromEntries(
    Object.entries(derived)
      .filter(([, f]) => f.size === 1)
      .map(([id, f]) => [id, [...f][0]]),
  );
  const listed: Record<string, number> = overrides.modelServiceTiers.find(
    (t) => t.provider === "openai" && t.tier === "priority",
  )!.factors;
  expect(listed).toEqual(single);
  expect(Object.keys(listed).length).toBeGreaterThanOrEqual(18);
});
