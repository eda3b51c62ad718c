import { expect, test } from "bun:test";
import fc from "fast-check";
import { stableId16 } from "@cellar/shared/spans";
import { rowDigest, top60Decimal } from "./persist-transcript.ts";

/** What transcript rows stored as their digest before rowDigest (the oracle). */
const oracle = (text: string) => BigInt(`0x${stableId16(text).slice(0, 15)}`).toString();

test("a row's digest is the top 60 bits of its stableId16 hash, as stored before (decimal int8)", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
      expect(rowDigest(text)).toBe(oracle(text));
    }),
    { numRuns: 3_000 },
  );
  for (const text of ["", "a", '{"item_id":"itm_1"}', "\u0000", "x".repeat(10_000)])
    expect(rowDigest(text)).toBe(oracle(text));
});

test("the 60-bit decimal is exact over the whole range of both halves, edges included", () => {
  const u32 = fc.oneof(
    fc.constantFrom(0, 1, 15, 16, 99_999, 100_000, 2 ** 31, 2 ** 32 - 1),
    fc.nat({ max: 2 ** 32 - 1 }),
  );
  fc.assert(
    fc.property(u32, u32, (hi, lo) => {
      expect(top60Decimal(hi, lo)).toBe((((BigInt(hi) << 32n) | BigInt(lo)) >> 4n).toString());
    }),
    { numRuns: 5_000 },
  );
});
