// The dashboard's display rules that issue 37 found wrong: chart axes (web/src/pages/chart-axes.ts)
// and small costs (web/src/format.ts). The overview's browser test checks the drawn labels too.
import { expect, test } from "bun:test";
import { usd } from "../web/src/format";
import { axisLabels, axisRange, axisSteps, axisWidth } from "../web/src/pages/chart-axes";

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

test("rates are bounded to 0-100%: all-zero rates get a 0-5% axis, not 0-10000%", () => {
  expect(axisRange("rate", 0)).toEqual([0, 0.05]);
  expect(axisRange("rate", null)).toEqual([0, 0.05]);
  expect(axisRange("rate", 1)).toEqual([0, 1]);
  for (const max of [0.001, 0.03, 0.2, 0.5, 0.77, 0.99, 1]) {
    const [lo, hi] = axisRange("rate", max);
    expect(lo).toBe(0);
    expect(hi).toBeGreaterThanOrEqual(max);
    expect(hi).toBeLessThanOrEqual(1);
  }
  expect(axisLabels("rate", [0, 0.01, 0.02, 0.03, 0.04, 0.05], pct)).toEqual(["0%", "1%", "2%", "3%", "4%", "5%"]);
  expect(axisLabels("rate", [0, 0.005, 0.01], pct)).toEqual(["0.0%", "0.5%", "1.0%"]);
});

test("counts get integer ticks only: a 4-5 range never reads 4, 5, 5", () => {
  const steps = axisSteps("count")!;
  expect(steps.every((s) => Number.isInteger(s))).toBe(true);
  expect(steps[0]).toBe(1);
  expect(axisRange("count", 5)).toEqual([0, 6]);
  expect(axisRange("count", 0)).toEqual([0, 1]);
  const labels = axisLabels("count", [4, 4.5, 5], (v) => String(v));
  expect(labels).toEqual(["4", "", "5"]);
  expect(new Set(labels.filter(Boolean)).size).toBe(labels.filter(Boolean).length);
});

test("the axis is as wide as its longest label", () => {
  expect(axisWidth(["0%", "100%"])).toBeGreaterThanOrEqual(4 * 7.2 + 20);
  expect(axisWidth(["$0.0000020", "$0.0000040"])).toBeGreaterThan(axisWidth(["0", "5"]));
  expect(axisWidth(["1,000,000,000"])).toBeGreaterThanOrEqual(13 * 7.2 + 20);
});

test("costs under a cent keep two significant digits: $0.0000020, never $0.00000", () => {
  expect(usd(0.0000012)).toBe("$0.0000012");
  expect(usd(0.00000195)).toBe("$0.000002");
  expect(usd(0.000004999)).toBe("$0.000005");
  expect(usd(1e-9)).toBe("$0.000000001");
  expect(usd(0.0049)).toBe("$0.0049");
  expect(usd(0.012345)).toBe("$0.0123");
  expect(usd(0)).toBe("$0");
  expect(usd(null)).toBe("—");
});
