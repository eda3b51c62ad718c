import { expect, test } from "bun:test";
import fc from "fast-check";
import { oneLine } from "./tldr.ts";

/** The definition: every whitespace run one space, trimmed, cut to `max` with an ellipsis. */
const flattenAll = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

test("oneLine reads only the head it can show, with the same result as flattening the whole text", () => {
  const unit = fc.constantFrom("a", "b", " ", "  ", "\n", "\t", "\u00a0", "\u2028", "\u3000", "😀", "\ud800", "é");
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 600 }), fc.integer({ min: 1, max: 150 }), (text, max) => {
      expect(oneLine(text, max)).toBe(flattenAll(text, max));
    }),
    { numRuns: 1_000 },
  );
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 400 }), fc.integer({ min: 1, max: 150 }), (text, max) => {
      expect(oneLine(text, max)).toBe(flattenAll(text, max));
    }),
    { numRuns: 500 },
  );
});
