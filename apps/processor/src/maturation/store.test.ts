import { expect, test } from "bun:test";
import { planHistoryReads, type HistorySize } from "./store.ts";

test("history reads: small sessions share a batch within one page, big ones stream alone", () => {
  const paging = { traceBytesPerPage: 1_000, tracesPerPage: 4, eventsPerPage: 10 };
  const sizes = new Map<string, HistorySize>([
    ["a", { id: "a", traces: 2, traceBytes: 300, events: 1 }],
    ["b", { id: "b", traces: 2, traceBytes: 300, events: 1 }],
    ["c", { id: "c", traces: 1, traceBytes: 100, events: 9 }], // events overflow the page: new batch
    ["big", { id: "big", traces: 50, traceBytes: 90_000, events: 0 }],
    ["fat", { id: "fat", traces: 1, traceBytes: 5_000, events: 0 }], // one trace over the byte budget
    ["d", { id: "d", traces: 0, traceBytes: 0, events: 0 }],
  ]);
  expect(planHistoryReads(["a", "b", "c", "big", "fat", "d"], sizes, paging)).toEqual([
    { batch: ["a", "b"] },
    { stream: "big" },
    { stream: "fat" },
    { batch: ["c", "d"] },
  ]);
});
