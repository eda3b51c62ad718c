import { expect, test } from "bun:test";
import { addTo, emptyHistogram } from "@cellar/shared/rollups/histogram";
import type postgres from "postgres";
import type { Delivery } from "@cellar/shared/nats/consume";
import type { MaturedMessage } from "@cellar/shared/payloads";
import {
  BUCKET_SECONDS,
  costModelOf,
  expandParts,
  ROLLUP_SESSIONS_PER_TRANSACTION,
  rollupHandler,
  sessionParts,
  storedParts,
} from "./rollups.ts";

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

test("the stored form (rows once, sparse histograms) expands to every bucket size's rows; the old expanded form reads as it is", () => {
  const source = {
    ...session,
    cost_by_model: [{ model: "gpt-4o-mini", calls: 3, promptTokens: 30, completionTokens: 9, costUsd: 0.03 }],
  };
  const traces = [
    { model: "gpt-4o-mini", ms: 0.4 },
    { model: "gpt-4o-mini", ms: 250 },
    { model: "gpt-4o-mini", ms: 250 },
    { model: "other", ms: 9_000_000 },
  ];
  const stored = storedParts(source, traces);
  // Kept as jsonb: what comes back is the JSON of it.
  const parts = expandParts(JSON.parse(JSON.stringify(stored)));
  const hist = (ms: number[]) => {
    const h = emptyHistogram();
    for (const m of ms) addTo(h, m);
    return h;
  };
  const rows = [
    { model: "", sessions: 1, traces: 4, latency_hist: hist([0.4, 250, 250, 9_000_000]) },
    { model: "gpt-4o-mini", sessions: 0, traces: 3, latency_hist: hist([0.4, 250, 250]) },
    { model: "other", sessions: 0, traces: 1, latency_hist: hist([9_000_000]) },
  ];
  const at = session.first_activity_at.getTime();
  expect(parts.map((p) => ({ ...p }))).toEqual(
    BUCKET_SECONDS.flatMap((seconds) =>
      rows.map((r) =>
        expect.objectContaining({
          ...r,
          environment: "test",
          bucket_seconds: seconds,
          bucket_start: new Date(at - (at % (seconds * 1000))).toISOString(),
        }),
      ),
    ),
  );
  expect(parts).toEqual(sessionParts(source, traces));
  // Each part has a histogram of its own (negating or merging one leaves the others).
  parts[0].latency_hist[0] = 99;
  expect(parts.filter((p) => p.latency_hist[0] === 99)).toHaveLength(1);
  expect(JSON.stringify(stored).length * 4).toBeLessThan(JSON.stringify(sessionParts(source, traces)).length);
  const old = sessionParts(source, traces);
  expect(expandParts(old)).toBe(old);
});

test("the consumer applies a batch's sessions in bounded transactions, each session once", async () => {
  // A batch of 200 messages of 20 sessions each, one session in two of them (a republish).
  const pk = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, "0")}`;
  const items = Array.from({ length: 200 }, (_, i) => ({
    value: Array.from({ length: 20 }, (_, j) => ({ entityPk: pk(i === 199 && j === 0 ? 0 : i * 20 + j) })),
  })) as unknown as Delivery<MaturedMessage[] | null>[];
  const transactions: string[][] = [];
  // Each transaction's first statement takes the sessions' locks: what it was given.
  const fake = {
    begin: async (work: (tx: unknown) => Promise<void>) => {
      const given: string[][] = [];
      const tx = Object.assign(async () => [], { array: (pks: string[]) => given.push(pks) });
      await work(tx);
      transactions.push(given[0]);
    },
  } as unknown as postgres.Sql;
  expect(await rollupHandler(fake)(items)).toEqual(items.map(() => "ack"));
  const distinct = 200 * 20 - 1;
  expect(transactions.map((t) => t.length)).toEqual([
    ...Array(Math.floor(distinct / ROLLUP_SESSIONS_PER_TRANSACTION)).fill(ROLLUP_SESSIONS_PER_TRANSACTION),
    distinct % ROLLUP_SESSIONS_PER_TRANSACTION,
  ]);
  expect(new Set(transactions.flat()).size).toBe(distinct);
});
