import { describe, expect, test } from "bun:test";
import { render } from "preact-render-to-string";
import { type CallCost, CostBreakdown, costTotals } from "./CostBreakdown";

const entry = {
  id: "anthropic/claude-sonnet-4-5",
  source: "@pydantic/genai-prices@0.1.8",
  url: null,
  date: "2026-09-23",
};
const claude: CallCost = {
  index: 0,
  model: "claude-sonnet-4-5-20250929",
  costUsd: 2.9895,
  reason: null,
  entry,
  serviceTier: null,
  lines: [
    { kind: "input", tokens: 30_000, usdPerMillion: 6, usd: 0.18, tier: "prompt > 200000 tokens" },
    { kind: "cache_read", tokens: 20_000, usdPerMillion: 0.6, usd: 0.012, tier: "prompt > 200000 tokens" },
    { kind: "cache_write", tokens: 50_000, usdPerMillion: 7.5, usd: 0.375, tier: "prompt > 200000 tokens" },
    { kind: "cache_write_1h", tokens: 200_000, usdPerMillion: 12, usd: 2.4, tier: "prompt > 200000 tokens" },
    { kind: "output", tokens: 1_000, usdPerMillion: 22.5, usd: 0.0225, tier: "prompt > 200000 tokens" },
  ],
};
const flex: CallCost = {
  index: 0,
  model: "gpt-5",
  costUsd: 0.00175,
  reason: null,
  entry: { ...entry, id: "openai/gpt-5" },
  serviceTier: "flex (x0.5)",
  lines: [
    { kind: "input", tokens: 2_000, usdPerMillion: 0.625, usd: 0.00125, tier: null },
    { kind: "output", tokens: 100, usdPerMillion: 5, usd: 0.0005, tier: null },
  ],
};
const unknown: CallCost = {
  index: 0,
  model: "acme-unknown-9",
  costUsd: null,
  reason: 'unknown model "acme-unknown-9" (provider openai): no price entry matches it',
  entry: null,
  serviceTier: null,
  lines: [],
};
const text = (html: string) => html.replace(/<[^>]+>/g, "").replace(/&quot;/g, '"');

describe("costTotals", () => {
  test("the total is the sum of the lines, rounded as the server rounds (1e-10 USD); kinds summed in order", () => {
    const t = costTotals([claude, flex]);
    // 0.18 + 0.012 + 0.375 + 2.4 + 0.0225 + 0.00125 + 0.0005
    expect(t.totalUsd).toBe(2.99125);
    expect(t.pricedUsd).toBe(t.totalUsd!);
    expect(t.lineCount).toBe(7);
    expect(t.byKind).toEqual([
      { kind: "input", tokens: 32_000, usd: 0.18125 },
      { kind: "cache_read", tokens: 20_000, usd: 0.012 },
      { kind: "cache_write", tokens: 50_000, usd: 0.375 },
      { kind: "cache_write_1h", tokens: 200_000, usd: 2.4 },
      { kind: "output", tokens: 1_100, usd: 0.023 },
    ]);
  });

  test("an unpriced call makes the total unknown; the priced calls still add up", () => {
    const t = costTotals([flex, unknown]);
    expect(t).toMatchObject({ totalUsd: null, pricedUsd: 0.00175, unpricedCalls: 1, lineCount: 2 });
  });
});

describe("CostBreakdown", () => {
  test("each call with its price entry, tier and lines; the total says it is the sum of the lines", () => {
    const html = render(
      <CostBreakdown
        calls={[
          { key: "a", name: "Call 1", call: claude },
          { key: "b", name: "Call 2", call: flex },
        ]}
      />,
    );
    const t = text(html);
    expect(t).toContain("Call 1: claude-sonnet-4-5-20250929 · $2.9895");
    expect(t).toContain("price anthropic/claude-sonnet-4-5, @pydantic/genai-prices@0.1.8 of 2026-09-23");
    expect(t).toContain("cache write 1 h200,000$12prompt > 200000 tokens$2.4000");
    expect(t).toContain("Call 2: gpt-5 · $0.0018");
    expect(t).toContain("tier flex (x0.5)");
    expect(html).toContain('aria-label="Lines of Call 2"');
    expect(html).toContain('aria-label="By token kind"');
    expect(t).toContain("Total: $2.9912 (sum of 7 lines over 2 calls)");
    expect(html.match(/<details class="cost-call" open/g)?.length).toBe(2);
  });

  test("an unpriced call shows its reason; a partial page says its total covers the calls shown", () => {
    const html = render(
      <CostBreakdown
        openCalls={false}
        partial
        calls={[
          { key: "a", name: "Call 1", call: flex },
          { key: "b", name: "Call 2", call: unknown },
        ]}
      >
        <button type="button">Show the next calls</button>
      </CostBreakdown>,
    );
    const t = text(html);
    expect(t).toContain("Call 2: acme-unknown-9 · unpriced");
    expect(t).toContain(
      'no price entry · unpriced: unknown model "acme-unknown-9" (provider openai): no price entry matches it',
    );
    expect(t).toContain(
      "Total of the calls shown: — (sum of 2 lines over 2 calls; 1 unpriced, the priced calls $0.0018)",
    );
    expect(html).not.toContain('<details class="cost-call" open');
    expect(html).toContain("Show the next calls");
  });

  test("a single call has no by-kind table; no calls say so", () => {
    expect(render(<CostBreakdown calls={[{ key: "a", name: "Call 1", call: flex }]} />)).not.toContain("By token kind");
    expect(text(render(<CostBreakdown calls={[]} />))).toContain("No model calls.");
  });
});
