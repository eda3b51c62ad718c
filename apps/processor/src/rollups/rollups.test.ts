import { expect, test } from "bun:test";
import { costModelOf, sessionParts } from "./rollups.ts";

const session = {
  id: "00000000-0000-0000-0000-000000000001",
  tenant_id: "t",
  trace_service_id: "s",
  environment: "test",
  first_activity_at: new Date("2026-11-28T06:07:00Z"),
  maturation_count: 1,
  matured_at: new Date("2026-11-28T06:20:00Z"),
  errors: 0,
  problems: 0,
};

test("a trace's model joins its cost row: equal, a dated version of it, or (unpriced) the cost row's dated form", () => {
  expect(costModelOf("gpt-4o-mini-2024-07-18", ["gpt-4o-mini", "gpt-4o"])).toBe("gpt-4o-mini");
  expect(costModelOf("acme-llm", ["acme-llm-2024-07-18", "gpt-4o"])).toBe("acme-llm-2024-07-18");
  // Not a dated suffix, or more than one: the trace keeps its own model.
  expect(costModelOf("gpt-4o", ["gpt-4o-mini"])).toBe("gpt-4o");
  expect(costModelOf("acme-llm", ["acme-llm-2024-07-18", "acme-llm-2025-01-01"])).toBe("acme-llm");
});

test("unpriced calls count per model and in the session row; priced models count none", () => {
  const parts = sessionParts(
    {
      ...session,
      cost_by_model: [
        {
          model: "acme-llm-2024-07-18",
          calls: 2,
          promptTokens: 10,
          completionTokens: 5,
          costUsd: null,
          unpricedCalls: 2,
        },
        { model: "gpt-4o-mini", calls: 1, promptTokens: 10, completionTokens: 5, costUsd: 0.01, unpricedCalls: 0 },
        // An analysis from before unpriced calls were counted.
        { model: "old-model", calls: 1, promptTokens: 1, completionTokens: 1, costUsd: 0.02 },
      ],
    },
    [
      { model: "acme-llm", ms: 100 },
      { model: "acme-llm", ms: 200 },
      { model: "gpt-4o-mini-2024-07-18", ms: 300 },
    ],
  ).filter((p) => p.bucket_seconds === 300);
  const by = Object.fromEntries(parts.map((p) => [p.model, { traces: p.traces, unpriced: p.unpriced_calls }]));
  expect(by).toEqual({
    "": { traces: 3, unpriced: 2 },
    "acme-llm-2024-07-18": { traces: 2, unpriced: 2 },
    "gpt-4o-mini": { traces: 1, unpriced: 0 },
    "old-model": { traces: 0, unpriced: 0 },
  });
});
