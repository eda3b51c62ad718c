import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { JsonPieceError, splitJsonInSteps } from "./json-steps.ts";
import { decodeTraces, OtlpDecodeError } from "./otlp/decode.ts";
import { runAtOnce } from "./steps.ts";
import { largestParse, mutate, random, render } from "./test-json.ts";

/**
 * JSON split along a path (json-steps.ts, issue 41) gives JSON.parse's value, and a text
 * JSON.parse refuses is refused too (a JsonPieceError, or null and the caller's one-piece parse).
 * The oracle is JSON.parse itself, on OTLP/JSON-shaped bodies formatted at random and edited.
 */
const PATH = ["resourceSpans", "scopeSpans", "spans"];

type Outcome = { error: true } | { value: string };

const oracle = (text: string): Outcome => {
  try {
    return { value: JSON.stringify(JSON.parse(text)) };
  } catch {
    return { error: true };
  }
};

const split = (text: string): Outcome => {
  try {
    const result = runAtOnce(splitJsonInSteps(text, PATH));
    return result ? { value: JSON.stringify(result.value) } : oracle(text); // null: the caller parses whole
  } catch (err) {
    if (err instanceof JsonPieceError) return { error: true };
    throw err;
  }
};

const span = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      traceId: fc.stringMatching(/^[0-9a-f]{0,32}$/),
      name: fc.string({ maxLength: 10 }),
      attributes: fc.jsonValue(),
    }),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const withExtra = <T extends Record<string, unknown>>(arb: fc.Arbitrary<T>) =>
  fc
    .tuple(
      arb,
      fc.dictionary(fc.constantFrom("resource", "scope", "schemaUrl", "x"), fc.jsonValue(), { maxKeys: 2 }),
      fc.boolean(),
    )
    .map(([own, extra, first]) => (first ? { ...own, ...extra } : { ...extra, ...own }));
const scopeSpans = fc.oneof(
  { weight: 6, arbitrary: withExtra(fc.record({ spans: fc.array(span, { maxLength: 6 }) })) },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const resourceSpans = fc.oneof(
  { weight: 6, arbitrary: withExtra(fc.record({ scopeSpans: fc.array(scopeSpans, { maxLength: 3 }) })) },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const body = withExtra(fc.record({ resourceSpans: fc.array(resourceSpans, { maxLength: 3 }) }));
const WORDS = ['"resourceSpans"', '"scopeSpans"', '"spans"', "[]", "{}"];

describe("splitJsonInSteps: JSON.parse's answer for every text", () => {
  test("generated OTLP/JSON-shaped bodies, formatted at random", () => {
    fc.assert(
      fc.property(body, fc.integer(), (value, seed) => {
        const text = render(value, random(seed));
        expect(split(text)).toEqual(oracle(text));
        expect(split(text)).toEqual({ value: JSON.stringify(value) });
      }),
      { numRuns: 400 },
    );
  });

  test("the same bodies after random edits", () => {
    let valid = 0;
    fc.assert(
      fc.property(body, fc.integer(), (value, seed) => {
        const pick = random(seed);
        const text = mutate(render(value, pick), pick, WORDS);
        const expected = oracle(text);
        if ("value" in expected) valid++;
        expect(split(text)).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
    expect(valid).toBeGreaterThan(100); // the edits also make other valid bodies (repeated keys, arrays)
  });

  test("texts at the scan's edges", () => {
    const s = '{"name":"a"}';
    for (const text of [
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s},${s}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}]}]}]} {"resourceSpans":[]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}]}]}]}}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}]}]]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}]} {"spans":[]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}]} 1]}]}`,
      `{"resourceSpans":[1 {"scopeSpans":[]}]}`,
      `{"resourceSpans":[{"scopeSpans":[]},]}`,
      `{"resourceSpans":[{"scopeSpans":[], "scopeSpans":[{"spans":[${s}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":5}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}],"spans":[]}]}]}`,
      `{"resourceSpans":{"scopeSpans":[]}}`,
      `{"resource_spans":[{"scope_spans":[{"spans":[${s}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}],"resourceSpans":[]}`,
      `{"\\u0072esourceSpans":[{"scopeSpans":[{"spans":[${s}]}]}]}`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":["]",${s}, "\\\\"]}]}]}`,
      `{"resourceSpans":[{"__proto__":{"a":1},"scopeSpans":[{"spans":[]}]}]}`,
      `[{"resourceSpans":[]}]`,
      `  {"resourceSpans":[ ]}  `,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}]}]}]`,
      `{"resourceSpans":[{"scopeSpans":[{"spans":[${s}`,
    ])
      expect({ text, outcome: split(text) }).toEqual({ text, outcome: oracle(text) });
  });

  test("a 500-span body is split one step per span, each parsed on its own", async () => {
    const spans = Array.from({ length: 500 }, (_, i) => ({
      traceId: "ab".repeat(16),
      name: `span ${i}`,
      attributes: [],
    }));
    const text = JSON.stringify({
      resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: {}, spans }] }],
    });
    const steps = splitJsonInSteps(text, PATH);
    let count = 0;
    const { largest } = await largestParse(() => {
      while (!steps.next().done) count++;
    });
    expect(count).toBeGreaterThanOrEqual(500);
    expect(largest).toBeLessThan(text.length / 100);
  });

  test("OTLP/JSON decode: same spans, and the same refusal for a body that is not JSON", () => {
    const json = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] },
          scopeSpans: [
            { spans: [{ traceId: "ab".repeat(16), spanId: "cd".repeat(8), name: "chat", startTimeUnixNano: "1" }] },
          ],
        },
      ],
    };
    const bytes = new TextEncoder().encode(JSON.stringify(json));
    expect(decodeTraces(bytes, "json")[0]).toMatchObject({ name: "chat", resource: { "service.name": "svc" } });
    const broken = new TextEncoder().encode(JSON.stringify(json).slice(0, -1));
    expect(() => decodeTraces(broken, "json")).toThrow(OtlpDecodeError);
    expect(() => decodeTraces(broken, "json")).toThrow("body is not valid JSON");
    expect(() => decodeTraces(new TextEncoder().encode("[1]"), "json")).toThrow("body must be a JSON object");
  });
});
