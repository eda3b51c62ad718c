import { expect, test } from "bun:test";
import fc from "fast-check";
import { addTo, bucketOf, emptyHistogram, HISTOGRAM_BUCKETS, merge, percentileOf } from "./histogram.ts";

test("a percentile read from the histogram is within 10% of the exact nearest-rank value", () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 1, max: 500_000, noNaN: true }), { minLength: 1, maxLength: 300 }),
      fc.integer({ min: 1, max: 100 }),
      (values, p) => {
        const h = emptyHistogram();
        for (const v of values) addTo(h, v);
        const sorted = [...values].sort((a, b) => a - b);
        const exact = sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1];
        const read = percentileOf(h, p)!;
        expect(Math.abs(read - exact) / exact).toBeLessThan(0.1);
      },
    ),
  );
});

test("merging histograms equals one histogram of all values (what summing rollup rows relies on)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.double({ min: 0, max: 1e7, noNaN: true }), { maxLength: 50 }), { maxLength: 6 }),
      (parts) => {
        const whole = emptyHistogram();
        const merged = emptyHistogram();
        for (const part of parts) {
          const h = emptyHistogram();
          for (const v of part) {
            addTo(h, v);
            addTo(whole, v);
          }
          merge(merged, h);
        }
        expect(merged).toEqual(whole);
      },
    ),
  );
});

test("bounds: sub-millisecond, huge and non-finite durations land in the end buckets", () => {
  expect(bucketOf(0)).toBe(0);
  expect(bucketOf(-5)).toBe(0);
  expect(bucketOf(Number.NaN)).toBe(0);
  expect(bucketOf(1e12)).toBe(HISTOGRAM_BUCKETS - 1);
  expect(percentileOf(emptyHistogram(), 50)).toBeNull();
});
