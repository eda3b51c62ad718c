import { expect, test } from "bun:test";
import fc from "fast-check";
import { SOURCED_FIELDS, storedItem } from "./transcript-source.ts";

/** storedItem as it was written before (a copy, then `delete` of the left-out keys): the oracle. */
function copyThenDelete(item: Record<string, unknown>, source?: { traceId: string }): Record<string, unknown> {
  const out: Record<string, unknown> = { ...item };
  for (const key of ["id", "type", "role", "timestamp", "traceId", "spanId"]) delete out[key];
  if (source) {
    for (const key of SOURCED_FIELDS) delete out[key];
    if (item.traceId === source.traceId) delete out.spanAttributes;
  }
  return out;
}

const FIELDS = [
  "id",
  "type",
  "role",
  "timestamp",
  "traceId",
  "spanId",
  ...SOURCED_FIELDS,
  "spanAttributes",
  "latencyMs",
  "name",
];

test("storedItem keeps the same keys in the same order as a copy less the deleted keys (the same JSON)", () => {
  const key = fc.oneof(
    fc.constantFrom(...FIELDS),
    fc.string({ maxLength: 8 }).filter((k) => k !== "__proto__"),
  );
  const value = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.string({ maxLength: 4 }),
    fc.integer(),
    fc.constantFrom("t1", "t2"),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(key, value), { maxLength: 16 }),
      fc.option(fc.constantFrom("t1", "t2"), { nil: undefined }),
      (entries, traceId) => {
        const item = Object.fromEntries(entries);
        const source = traceId === undefined ? undefined : { traceId };
        const got = storedItem(item, source);
        const want = copyThenDelete(item, source);
        expect(Object.keys(got)).toEqual(Object.keys(want));
        expect(JSON.stringify(got)).toBe(JSON.stringify(want));
      },
    ),
    { numRuns: 3_000 },
  );
});
