import { expect, test } from "bun:test";
import fc from "fast-check";
import { stableId16 } from "@cellar/shared/spans";
import { stableHex16 } from "./fnv.ts";

test("stableHex16 gives stableId16's 16 hex digits for any parts (item and span ids stay the same)", () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: "binary", maxLength: 120 }), { minLength: 1, maxLength: 4 }), (parts) => {
      expect(stableHex16(...parts)).toBe(stableId16(...parts));
    }),
    { numRuns: 5_000 },
  );
  expect(stableHex16("")).toBe(stableId16(""));
  expect(stableHex16("x".repeat(100_000), "\uffff")).toBe(stableId16("x".repeat(100_000), "\uffff"));
});
