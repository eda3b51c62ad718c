import { expect, test } from "bun:test";
import { planHistoryReads, UNSIZED_TRACE_BYTES, type HistorySize } from "./store.ts";

const size = (id: string, traces: number, traceBytes: number, events: number, jsonBytes = traceBytes * 3) => ({
  id,
  traces,
  traceBytes,
  jsonBytes,
  events,
});

test("history reads: small sessions share a batch within one page, big ones stream alone", () => {
  const paging = {
    traceBytesPerPage: 1_000,
    tracesPerPage: 2,
    jsonBytesPerPage: 10_000,
    tracesPerBatch: 4,
    eventsPerPage: 10,
  };
  const sizes = new Map<string, HistorySize>([
    ["a", size("a", 2, 300, 1)],
    ["b", size("b", 2, 300, 1)],
    ["c", size("c", 1, 100, 9)], // events overflow the page: new batch
    ["big", size("big", 50, 90_000, 0)],
    ["fat", size("fat", 1, 5_000, 0)], // one trace over the byte budget
    ["d", size("d", 0, 0, 0)],
  ]);
  expect(planHistoryReads(["a", "b", "c", "big", "fat", "d"], sizes, paging)).toEqual([
    { batch: ["a", "b"] },
    { stream: "big" },
    { stream: "fat" },
    { batch: ["c", "d"] },
  ]);
});

test("history reads: the JSON a page inflates to bounds it too; a trace of unknown size counts at the cap", () => {
  const paging = {
    traceBytesPerPage: 1_000_000,
    tracesPerPage: 16,
    jsonBytesPerPage: 2 * UNSIZED_TRACE_BYTES,
    tracesPerBatch: 1_000,
    eventsPerPage: 500,
  };
  const sizes = new Map<string, HistorySize>([
    // Small compressed payloads that inflate to a lot: two share a page, the third starts another.
    ["z1", size("z1", 1, 10, 0, UNSIZED_TRACE_BYTES)],
    ["z2", size("z2", 1, 10, 0, UNSIZED_TRACE_BYTES)],
    ["z3", size("z3", 1, 10, 0, UNSIZED_TRACE_BYTES)],
    // Three older traces without a size: over the page alone, streamed.
    ["old", size("old", 3, 30, 0, 3 * UNSIZED_TRACE_BYTES)],
    // Many small sized traces: one page, whatever their count up to tracesPerBatch.
    ["many", size("many", 400, 400_000, 0, 1_200_000)],
  ]);
  expect(planHistoryReads(["z1", "z2", "z3", "old", "many"], sizes, paging)).toEqual([
    { batch: ["z1", "z2"] },
    { stream: "old" },
    { batch: ["z3", "many"] },
  ]);
});
