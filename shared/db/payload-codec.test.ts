import { Buffer } from "node:buffer";
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { decodePayload, encodePayload, inJsonbOrder } from "./payload-codec.ts";

/** The first version of the key order (two UTF-8 buffers per comparison), kept as the oracle. */
function oracle(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(oracle);
  if (value === null || typeof value !== "object") return value;
  const order = (a: string, b: string) =>
    Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(order)) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = oracle(v);
  }
  return out;
}

// Keys mixing ASCII, accents, astral characters and lone surrogates; objects of 0-8 keys.
const key = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 4 }).map((units) => String.fromCharCode(...units)),
  fc.constantFrom("a", "b", "aa", "é", "\uffff", "\ud83d\ude00", "\ud800", "z\u00e9", "id", "ID", "_", "~"),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 5 }),
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(key, tie("node"), { maxKeys: 8 }),
  ),
})).node;

describe("payload codec", () => {
  test("keys in jsonb order: the same text as the byte-comparing first version, any keys", () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(JSON.stringify(inJsonbOrder(v))).toBe(JSON.stringify(oracle(v)));
      }),
      { numRuns: 500 },
    );
  });

  test("a payload decodes back to its jsonb-ordered self", () => {
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 8 }), (v) => {
        expect(JSON.stringify(decodePayload({ payload_z: encodePayload(v) }))).toBe(JSON.stringify(oracle(v)));
      }),
      { numRuns: 200 },
    );
  });
});
