import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  applyTransition,
  decideTransition,
  TRANSITIONS,
  type MonitorState,
  type MonitorThresholds,
} from "./state-machine.ts";
import { aggregateValues } from "./samples.ts";

const above: MonitorThresholds = {
  direction: "above",
  threshold: 100,
  warningThreshold: 80,
  hysteresis: 10,
  minSamples: 1,
};
const run = (t: MonitorThresholds, values: number[], state: MonitorState = "ok") => {
  const taken: string[] = [];
  for (const value of values) {
    const tr = decideTransition(state, { value, samples: 5 }, t);
    if (!tr) continue;
    taken.push(tr);
    state = applyTransition(state, tr).to;
  }
  return { state, taken };
};

describe("monitor state machine", () => {
  test("rises through warning to alert and back down only past the band", () => {
    expect(run(above, [50, 85, 99, 105, 95, 91, 89, 75, 71, 69])).toEqual({
      state: "ok",
      taken: ["warn", "escalate", "ease", "resolve"],
    });
  });

  test("direction below mirrors it", () => {
    const below: MonitorThresholds = {
      direction: "below",
      threshold: 0.5,
      warningThreshold: null,
      hysteresis: 0.2,
      minSamples: 1,
    };
    expect(run(below, [0.2, 0.55, 0.46, 0.575, 0.66, 0.717])).toEqual({ state: "ok", taken: ["alert", "resolve"] });
  });

  test("no decision below the minimum sample size or without a value", () => {
    expect(decideTransition("ok", { value: 1000, samples: 2 }, { ...above, minSamples: 3 })).toBeNull();
    expect(decideTransition("alert", { value: null, samples: 9 }, above)).toBeNull();
    expect(decideTransition("alert", { value: Number.NaN, samples: 9 }, above)).toBeNull();
  });

  test("a value flapping inside the band after a rise takes no transition", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 90.0001, max: 1000, noNaN: true }), { maxLength: 50 }), (values) => {
        expect(run(above, values, "alert").taken).toEqual([]);
      }),
    );
  });

  test("every decided transition starts from a state it allows, and each transition is reachable", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        fc.constantFrom<MonitorState>("ok", "warning", "alert"),
        fc.double({ min: -500, max: 500, noNaN: true }),
        fc.option(fc.double({ min: -500, max: 500, noNaN: true }), { nil: null }),
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.constantFrom<"above" | "below">("above", "below"),
        fc.double({ min: -1000, max: 1000, noNaN: true }),
        (state, threshold, warning, hysteresis, direction, value) => {
          const t = { direction, threshold, warningThreshold: warning, hysteresis, minSamples: 1 };
          const tr = decideTransition(state, { value, samples: 1 }, t);
          if (tr) {
            seen.add(tr);
            expect(() => applyTransition(state, tr)).not.toThrow();
          }
        },
      ),
      { numRuns: 5000 },
    );
    expect([...seen].sort()).toEqual(Object.keys(TRANSITIONS).sort());
  });
});

test("the preview's percentile is Postgres's percentile_cont (linear interpolation)", () => {
  expect(aggregateValues("p95", [1, 2, 3, 4])).toBeCloseTo(3.85, 10);
  expect(aggregateValues("p50", [5, 1, 3])).toBe(3);
  expect(aggregateValues("p99", [7])).toBe(7);
  expect(aggregateValues("mean", [])).toBeNull();
});
