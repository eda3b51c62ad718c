import { expect, test } from "bun:test";
import fc from "fast-check";
import { stableId, stableId16 } from "@cellar/shared/spans";
import { fnv1a64 } from "./fnv.ts";

/** stableId16 as it was written before it took fnv1a64 (32-bit halves, a division per character): the oracle. */
function halvesStableId16(...parts: string[]): string {
  const text = parts.join("\u0000");
  let lo = 0x84222325,
    hi = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    lo = (lo ^ text.charCodeAt(i)) >>> 0;
    const m = lo * 0x1b3;
    hi = (hi * 0x1b3 + Math.floor(m / 4294967296) + (lo << 8)) >>> 0;
    lo = m >>> 0;
  }
  return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0");
}

test("stableId16 gives the 32-bit-halves hash's 16 hex digits for any parts (span, item ids and fingerprints stay the same)", () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: "binary", maxLength: 120 }), { minLength: 1, maxLength: 4 }), (parts) => {
      expect(stableId16(...parts)).toBe(halvesStableId16(...parts));
      expect(stableId16(...parts)).toBe(stableId(...parts).slice(0, 16));
    }),
    { numRuns: 5_000 },
  );
  expect(stableId16("")).toBe(halvesStableId16(""));
  expect(stableId16("")).toBe("cbf29ce484222325");
  expect(stableId16("x".repeat(100_000), "\uffff")).toBe(halvesStableId16("x".repeat(100_000), "\uffff"));
});

test("fnv1a64 is FNV-1a 64 over UTF-16 code units (the published vectors for ASCII)", () => {
  const hex = (s: string) =>
    fnv1a64(s)
      .map((n) => n.toString(16).padStart(8, "0"))
      .join("");
  expect(hex("a")).toBe("af63dc4c8601ec8c");
  expect(hex("foobar")).toBe("85944171f73967e8");
});
