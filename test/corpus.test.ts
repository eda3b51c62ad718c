import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLatencyNorms } from "../apps/processor/src/maturation/norms";
import { createTestStack, type TestStack } from "./helpers/stack";
import { buildCorpus } from "./corpus/scenarios";
import { replayCorpus } from "./corpus/replay";
import { formatReport } from "./corpus/report";

// The analysis corpus (test/corpus/): replayed through the real apps and scored against the
// reference. `npm run score` prints the same report.
let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  // The latency baseline is read fresh at each maturation (no 60 s cache) so the replay's
  // candidates see the baseline stored just before them.
  // Tiny history pages: sessions of up to 3 traces are read in batches, longer ones streamed in
  // pages of 3 traces / 2 events, so both read paths must give the reference's answers.
  await stack.startProcessor({
    latencyNorms: createLatencyNorms(stack.database.sql, { ttlMs: 0 }),
    sweepGraceSeconds: 2,
    sweepIntervalMs: 2_000,
    maturation: {
      historyPaging: {
        traceBytesPerPage: 64 * 1024,
        tracesPerPage: 3,
        jsonBytesPerPage: 192 * 1024,
        tracesPerBatch: 3,
        eventsPerPage: 2,
      },
    },
  });
});
afterAll(() => stack.stop());

test("the corpus is deterministic and covers at least 40 sessions", () => {
  const a = buildCorpus();
  expect(a.length).toBeGreaterThanOrEqual(40);
  expect(JSON.stringify(buildCorpus().map((s) => [s.w.traces, s.w.events, s.w.transcript()]))).toBe(
    JSON.stringify(a.map((s) => [s.w.traces, s.w.events, s.w.transcript()])),
  );
});

test("corpus score: transcripts and costs exact, every detector's precision and recall >= 0.95", async () => {
  const report = await replayCorpus(stack);
  console.log(formatReport(report));
  expect(report.transcriptExact).toBe(report.total);
  expect(report.costExact).toBe(report.total);
  for (const [detector, c] of Object.entries(report.detectors)) {
    expect({ detector, precisionOk: c.precision >= 0.95, recallOk: c.recall >= 0.95 }).toEqual({
      detector,
      precisionOk: true,
      recallOk: true,
    });
    expect(c.tp).toBeGreaterThan(0); // every detector is exercised
  }
  // The held-out set (test/corpus/heldout/): its transcripts and costs are exact too; its detector
  // figures are printed by `npm run score`, measured, not tuned on.
  expect(report.heldout.transcriptExact).toBe(report.heldout.total);
  expect(report.heldout.costExact).toBe(report.heldout.total);
  // Resumed sessions matured twice and still show each item once.
  expect(report.sessions.filter((s) => s.kind === "resumed").map((s) => s.maturationCount)).toEqual([2, 2, 2]);
  // Bounded by the replay's own stall check (60 s without progress) and cap (replay.ts, waitMatured).
}, 660_000);
