import { expect, test } from "bun:test";
import fc from "fast-check";
import { stableId, stableId16 } from "./spans.ts";

test("stableId16 is the first 16 hex digits of stableId, for any parts", () => {
  expect(stableId16("trace-1", "response", "0")).toBe("e0270a693588d02f");
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc
            .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
            .map((units) => String.fromCharCode(...units)),
        ),
        { maxLength: 4 },
      ),
      (parts) => {
        expect(stableId16(...parts)).toBe(stableId(...parts).slice(0, 16));
      },
    ),
    { numRuns: 1_000 },
  );
});
