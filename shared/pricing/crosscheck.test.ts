// The price table against an independent one that someone else keeps: @pydantic/genai-prices
// (its data is bundled in the package; nothing is fetched). Every current entry of ours that it
// knows must agree on input, output and cached-input price, except the differences listed below,
// each with the reason it is not a mistake of ours. A new disagreement (a price changed on
// either side, or an entry typed wrong) fails here: re-read the entry's `source` and either
// correct it or list the difference with its reason (docs/pricing.md).
import { expect, test } from "bun:test";
import { calcPrice } from "@pydantic/genai-prices";
import table from "./prices.json" with { type: "json" };

/** Our provider ids to theirs. */
const PROVIDER: Record<string, string> = {
  openai: "openai",
  "azure.ai.openai": "azure",
  anthropic: "anthropic",
  "aws.bedrock": "aws",
  "gcp.gemini": "google",
  "gcp.vertex_ai": "google",
  mistral_ai: "mistral",
};

/** `provider model field`: why the two tables differ there. */
const KNOWN: Record<string, string> = {
  "gcp.gemini gemini-1.5-flash-8b input":
    "theirs has no flash-8b entry and matches the id as gemini-1.5-flash by prefix",
  "gcp.gemini gemini-1.5-flash-8b output": "as above",
  "gcp.gemini gemini-1.5-flash-8b cached": "as above",
  "gcp.gemini gemini-1.5-pro cached":
    "theirs has no cache price for 1.5 Pro (charges cache reads as input); Google published $0.3125",
  "gcp.gemini gemini-2.5-flash-preview-04-17 cached": "theirs has no cache price for this preview",
  "mistral_ai voxtral-mini input": "theirs prices Voxtral Mini by audio minute only (0 per token)",
  "mistral_ai voxtral-mini output": "as above",
  "mistral_ai voxtral-small output":
    "unresolved: theirs $0.4, ours $0.3 per million output tokens; re-read Mistral's page (docs/pricing.md)",
};

/** The newest entry per provider and model: older ones are price history, not today's price. */
function currentEntries() {
  const newest = new Map<string, (typeof table.prices)[number]>();
  for (const e of table.prices) {
    const k = `${e.provider} ${e.model}`;
    const seen = newest.get(k);
    if (!seen || seen.from < e.from) newest.set(k, e);
  }
  return [...newest.values()];
}

/** Their price per million tokens, asked at 100,000 tokens (under every long-context tier). */
function theirs(providerId: string, model: string) {
  // Bedrock ids carry a vendor prefix and a version suffix that our folded names drop.
  const ids = [model, `${model}-latest`, `${model}-preview`].concat(
    ["meta", "amazon", "cohere", "mistral", "ai21", "anthropic"].map((v) => `${v}.${model}-v1:0`),
  );
  const ask = (usage: Record<string, number>) => {
    for (const id of ids) {
      const r = calcPrice(usage, id, { providerId });
      if (r) return r.total_price * 10;
    }
    return null;
  };
  const input = ask({ input_tokens: 100_000 });
  if (input === null) return null;
  return {
    input,
    output: ask({ output_tokens: 100_000 })!,
    cached: ask({ input_tokens: 100_000, cache_read_tokens: 100_000 })!,
  };
}

test("current prices agree with @pydantic/genai-prices wherever it knows the model, but for the listed differences", () => {
  const differ: string[] = [];
  let compared = 0;
  for (const e of currentEntries()) {
    const providerId = PROVIDER[e.provider];
    const t = providerId ? theirs(providerId, e.model) : null;
    if (!t) continue;
    compared++;
    const same = (a: number, b: number) => Math.abs(a - b) <= Math.max(1e-9, 0.01 * Math.max(a, b));
    if (!same(e.input, t.input)) differ.push(`${e.provider} ${e.model} input`);
    if (!same(e.output, t.output)) differ.push(`${e.provider} ${e.model} output`);
    if (e.cachedInput !== null && !same(e.cachedInput, t.cached)) differ.push(`${e.provider} ${e.model} cached`);
  }
  expect(differ.sort()).toEqual(Object.keys(KNOWN).sort());
  // Most of the table is covered: a change of their ids or of our mapping shows up here.
  expect(compared).toBeGreaterThanOrEqual(95);
});
