import { expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import protobuf from "protobufjs";
import { decodeProtobuf, decodeProtobufInSteps, encodeRequestFromJson, OTLP_TYPES } from "./decode.ts";

/**
 * A protobuf OTLP request decoded in steps (proto-steps.ts, issue 41) is the one-piece decode's
 * message, and a message the one-piece decode refuses is refused with the same error. The oracle
 * is decodeProtobuf, the one-piece decode both doors used before.
 */
type Outcome = { error: string } | { value: unknown };

function outcome(read: () => unknown): Outcome {
  try {
    return { value: read() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Runs the steps and counts them. */
function stepped(typeName: string, bytes: Uint8Array): { outcome: Outcome; steps: number } {
  let steps = 0;
  const result = outcome(() => {
    const it = decodeProtobufInSteps(typeName, bytes);
    for (;;) {
      const next = it.next();
      if (next.done) return next.value;
      steps++;
    }
  });
  return { outcome: result, steps };
}

/** Same value (every field the walk reads, ids as bytes, unknown fields too) or the same error. */
function expectSame(typeName: string, bytes: Uint8Array) {
  const whole = outcome(() => decodeProtobuf(typeName, bytes));
  const { outcome: sliced } = stepped(typeName, bytes);
  if ("error" in whole) {
    expect(sliced).toEqual(whole);
    return whole;
  }
  expect("value" in sliced).toBe(true);
  expect(plain((sliced as { value: unknown }).value)).toEqual(plain(whole.value));
  return whole;
}

/** The message as plain data with its unknown fields (protobufjs keeps them apart, `$unknowns`). */
function plain(message: unknown): unknown {
  const walk = (v: any): any => {
    if (v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString("hex")}`;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) out[k] = walk(v[k]);
      if (v.$unknowns) out.$unknowns = walk(v.$unknowns);
      out.$type = v.constructor?.name;
      return out;
    }
    if (typeof v === "number" && Number.isNaN(v)) return "NaN";
    return v;
  };
  return walk(message);
}

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", maxDepth: 4, withCrossShrink: true },
    fc.record({ stringValue: fc.string({ maxLength: 20 }) }),
    fc.record({ intValue: fc.integer().map(String) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ doubleValue: fc.double({ noNaN: true }) }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie("value"), { maxLength: 3 }) }) }),
    fc.record({
      kvlistValue: fc.record({
        values: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: tie("value") }), { maxLength: 3 }),
      }),
    }),
  ),
})).value;
const attributes = fc.array(fc.record({ key: fc.string({ maxLength: 12 }), value: anyValue }), { maxLength: 4 });
const span = fc.record(
  {
    traceId: hex(32),
    spanId: hex(16),
    parentSpanId: hex(16),
    name: fc.string({ maxLength: 20 }),
    kind: fc.nat(5),
    startTimeUnixNano: fc.bigInt({ min: 0n, max: 2n ** 63n }).map(String),
    endTimeUnixNano: fc.bigInt({ min: 0n, max: 2n ** 63n }).map(String),
    attributes,
    events: fc.array(fc.record({ name: fc.string({ maxLength: 8 }), timeUnixNano: fc.nat().map(String), attributes }), {
      maxLength: 2,
    }),
    status: fc.record({ code: fc.nat(2), message: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: ["traceId", "spanId", "name"] },
);
const resource = fc.record({ attributes }, { requiredKeys: [] });
const scope = fc.record(
  { name: fc.string({ maxLength: 8 }), version: fc.string({ maxLength: 4 }) },
  { requiredKeys: [] },
);
const traceRequest = fc.record({
  resourceSpans: fc.array(
    fc.record(
      {
        resource,
        schemaUrl: fc.string({ maxLength: 8 }),
        scopeSpans: fc.array(
          fc.record(
            { scope, schemaUrl: fc.string({ maxLength: 8 }), spans: fc.array(span, { maxLength: 5 }) },
            {
              requiredKeys: ["spans"],
            },
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: ["scopeSpans"] },
    ),
    { maxLength: 3 },
  ),
});
const logsRequest = fc.record({
  resourceLogs: fc.array(
    fc.record({
      resource,
      scopeLogs: fc.array(
        fc.record({
          scope,
          logRecords: fc.array(
            fc.record(
              {
                timeUnixNano: fc.nat().map(String),
                severityNumber: fc.nat(24),
                severityText: fc.string({ maxLength: 6 }),
                body: anyValue,
                attributes,
                traceId: hex(32),
              },
              { requiredKeys: [] },
            ),
            { maxLength: 5 },
          ),
        }),
        { maxLength: 3 },
      ),
    }),
    { maxLength: 3 },
  ),
});

/** Choices drawn from numbers fast-check generated (so a failure shrinks). */
const picker = (draws: number[]) => {
  let i = 0;
  return (n: number) => draws[i++ % draws.length] % n;
};

/** One to three edits: a byte changed, inserted or deleted, the end cut, a span repeated elsewhere. */
function mutate(bytes: Uint8Array, pick: (n: number) => number): Uint8Array {
  let out = Array.from(bytes);
  for (let n = 1 + pick(3); n > 0; n--) {
    const at = pick(out.length + 1);
    const kind = pick(5);
    if (kind === 0 && out.length) out[Math.min(at, out.length - 1)] = pick(256);
    else if (kind === 1) out.splice(at, 0, pick(256));
    else if (kind === 2) out.splice(at, 1 + pick(4));
    else if (kind === 3) out = out.slice(0, at);
    else {
      const from = pick(out.length + 1);
      out.splice(at, 0, ...out.slice(from, from + 1 + pick(30)));
    }
  }
  return Uint8Array.from(out);
}

const SIGNALS = [
  { name: "traces", typeName: OTLP_TYPES.traceRequest, arb: traceRequest },
  { name: "logs", typeName: OTLP_TYPES.logsRequest, arb: logsRequest },
] as const;

for (const { name, typeName, arb } of SIGNALS) {
  test(`${name}: generated requests decode in steps to the one-piece decode's message (Uint8Array and Buffer)`, () => {
    fc.assert(
      fc.property(arb, (json) => {
        const bytes = encodeRequestFromJson(name, json);
        expectSame(typeName, bytes);
        expectSame(typeName, Buffer.from(bytes));
      }),
      { numRuns: 150 },
    );
  });

  test(`${name}: mutated requests get the one-piece decode's message or its error`, () => {
    let refused = 0;
    fc.assert(
      fc.property(arb, fc.array(fc.nat(), { minLength: 20, maxLength: 20 }), (json, draws) => {
        const bytes = mutate(encodeRequestFromJson(name, json), picker(draws));
        if ("error" in expectSame(typeName, bytes)) refused++;
        expectSame(typeName, Buffer.from(bytes));
      }),
      { numRuns: 1500 },
    );
    expect(refused).toBeGreaterThan(100); // the edits reach errors, not only other valid messages
  });
}

test("one step per span: a 500-span request is not decoded in one piece", () => {
  const spans = Array.from({ length: 500 }, (_, i) => ({
    traceId: "ab".repeat(16),
    spanId: i.toString(16).padStart(16, "0"),
    name: `span ${i}`,
    attributes: [{ key: "gen_ai.prompt", value: { stringValue: "x".repeat(400) } }],
  }));
  const bytes = encodeRequestFromJson("traces", {
    resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: "s" }, spans }] }],
  });
  const { outcome: result, steps } = stepped(OTLP_TYPES.traceRequest, bytes);
  expect(steps).toBe(500);
  expect(plain((result as { value: unknown }).value)).toEqual(plain(decodeProtobuf(OTLP_TYPES.traceRequest, bytes)));
});

test("fields around the items: repeated resources merge, unknown fields kept, items between them", () => {
  const w = protobuf.Writer.create();
  const resourceSpans = (inner: (w: protobuf.Writer) => void) => {
    const c = protobuf.Writer.create();
    inner(c);
    const b = c.finish();
    w.uint32((1 << 3) | 2).bytes(b);
  };
  resourceSpans((c) => {
    const attr = (key: string) => {
      const kv = protobuf.Writer.create();
      kv.uint32((1 << 3) | 2).string(key);
      return kv.finish();
    };
    const res = (key: string) => {
      const r = protobuf.Writer.create();
      r.uint32((1 << 3) | 2).bytes(attr(key));
      return r.finish();
    };
    c.uint32((1 << 3) | 2).bytes(res("a")); // resource
    c.uint32((2 << 3) | 2).bytes(new Uint8Array()); // an empty ScopeSpans between
    c.uint32((1 << 3) | 2).bytes(res("b")); // the resource again: merged
    c.uint32((99 << 3) | 0).uint32(7); // unknown varint
    c.uint32((3 << 3) | 2).string("url-1");
    c.uint32((3 << 3) | 2).string("url-2"); // last one wins
  });
  const bytes = w.finish();
  const sliced = expectSame(OTLP_TYPES.traceRequest, bytes) as { value: any };
  expect(sliced.value.resourceSpans[0].resource.attributes.map((a: any) => a.key)).toEqual(["a", "b"]);
  expect(sliced.value.resourceSpans[0].schemaUrl).toBe("url-2");
});

test("nesting at the recursion limit is refused as in one piece", () => {
  const message = (fields: Array<[number, Uint8Array | string]>) => {
    const w = protobuf.Writer.create();
    for (const [id, v] of fields)
      typeof v === "string" ? w.uint32((id << 3) | 2).string(v) : w.uint32((id << 3) | 2).bytes(v);
    return w.finish();
  };
  // AnyValue { kvlist_value (6): KeyValueList { values (1): KeyValue { key (1), value (2) } } }, n deep.
  const nested = (n: number) => {
    let value = message([[1, "leaf"]]);
    for (let i = 0; i < n; i++)
      value = message([
        [
          6,
          message([
            [
              1,
              message([
                [1, "k"],
                [2, value],
              ]),
            ],
          ]),
        ],
      ]);
    return value;
  };
  // Request > ResourceSpans > ScopeSpans > Span (attributes: 9) > KeyValue > AnyValue: depth 5 + 3n.
  const request = (n: number) =>
    message([
      [
        1,
        message([
          [
            2,
            message([
              [
                2,
                message([
                  [5, "span"],
                  [
                    9,
                    message([
                      [1, "deep"],
                      [2, nested(n)],
                    ]),
                  ],
                ]),
              ],
            ]),
          ],
        ]),
      ],
    ]);
  const limit = protobuf.Reader.recursionLimit;
  const edge = Math.floor((limit - 5) / 3); // the deepest nesting the one-piece decode accepts
  const outcomes = [edge - 1, edge, edge + 1, edge + 2].map(
    (n) => "error" in expectSame(OTLP_TYPES.traceRequest, request(n)),
  );
  expect(outcomes).toEqual([false, false, true, true]);
  expect(protobuf.Reader.recursionLimit).toBe(limit);
});
