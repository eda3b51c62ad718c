import { expect, test } from "bun:test";
import { createBatcher } from "./batcher.ts";

test("calls within the wait share one run, results come back in order", async () => {
  const runs: number[][] = [];
  const double = createBatcher(async (xs: number[]) => (runs.push(xs), xs.map((x) => x * 2)), {
    maxSize: 10,
    maxWaitMs: 5,
  });
  expect(await Promise.all([1, 2, 3].map(double))).toEqual([2, 4, 6]);
  expect(runs).toEqual([[1, 2, 3]]);
});

test("a full batch runs at once; a failing batch fails only its bad item", async () => {
  const runs: number[][] = [];
  const check = createBatcher(
    async (xs: number[]) => {
      runs.push(xs);
      if (xs.includes(13)) throw new Error("13 is bad");
      return xs;
    },
    { maxSize: 3, maxWaitMs: 1000 },
  );
  const results = await Promise.allSettled([1, 13, 3].map(check));
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(runs[0]).toEqual([1, 13, 3]);
});
