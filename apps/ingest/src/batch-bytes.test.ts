// batchMessages writes a batch message's bytes piece by piece (publish.ts). Oracle: the code it
// replaced, kept here verbatim (the items' texts joined into the message's text, then encoded):
// the same bytes, the same split, the same ids, for generated items of every kind, with and
// without the door's payload text, in any script (and lone surrogates), at any maximum size.
// And the OTLP doors' id (idPrefix + idSource) is the id of the concatenated text they used to hash.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { batchMessageIdFor, batchMessages, messageIdFor, type StoreInput, splitItems } from "./publish.ts";

/** The old batchMessages (before issue 41 part 4's allocation work), synchronous. */
function oldBatchMessages(inputs: StoreInput[], receivedAt: string, maxBytes: number) {
  const s = JSON.stringify;
  const itemText = (input: StoreInput, messageId: string) =>
    `{"kind":${s(input.kind)},"serviceName":${s(input.serviceName)},"messageId":${s(messageId)},"payload":${input.payloadText ?? s(input.payload)}}`;
  const items: Array<{ input: StoreInput; messageId: string; text: string; bytes: number }> = [];
  for (const input of inputs) {
    const messageId = messageIdFor(input);
    const text = itemText(input, messageId);
    items.push({ input, messageId, text, bytes: Buffer.byteLength(text) });
  }
  return splitItems(items, (i) => i.bytes, maxBytes).map((run) => {
    const messageId = batchMessageIdFor(run.map((i) => i.messageId));
    const tenantId = run[0].input.tenantId;
    const text = `{"kind":"batch","messageId":${s(messageId)},"tenantId":${s(tenantId)},"receivedAt":${s(receivedAt)},"items":[${run.map((i) => i.text).join(",")}]}`;
    return { messageId, text, inputs: run.map((i) => i.input) };
  });
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: "binary" }),
  fc.constantFrom("\ud800", "x\udfffy", "é", "日本語", "😀", '"\\\n', ""),
);
const json = fc.jsonValue({ maxDepth: 3 });
const input: fc.Arbitrary<StoreInput> = fc
  .record({
    kind: fc.constantFrom("trace", "event", "score") as fc.Arbitrary<StoreInput["kind"]>,
    tenantId: fc.constantFrom("00000000-0000-4000-8000-000000000001", "t\u00e9"),
    serviceName: text,
    payload: fc.dictionary(text, fc.oneof(json, text), { maxKeys: 6 }),
    withText: fc.boolean(),
    idSource: fc.option(text, { nil: undefined }),
  })
  .map(({ withText, payload, ...rest }) => ({
    ...rest,
    payload: payload as never,
    payloadText: withText ? JSON.stringify(payload) : undefined,
  }));

test("a batch message's bytes, split and ids are the old code's, for generated items and maximum sizes", async () => {
  const decoder = new TextEncoder();
  await fc.assert(
    fc.asyncProperty(
      fc.array(input, { minLength: 1, maxLength: 30 }),
      fc.integer({ min: 600, max: 20_000 }),
      async (inputs, maxBytes) => {
        const receivedAt = "2026-01-02T03:04:05.678Z";
        const old = oldBatchMessages(inputs, receivedAt, maxBytes);
        const now = await batchMessages(inputs, receivedAt, maxBytes, async () => {});
        expect(now.map((m) => m.value.messageId)).toEqual(old.map((m) => m.messageId));
        expect(now.map((m) => m.inputs)).toEqual(old.map((m) => m.inputs));
        for (let i = 0; i < old.length; i++) expect(now[i].data).toEqual(decoder.encode(old[i].text));
      },
    ),
    { numRuns: 400 },
  );
});

test("large items (a 500-span OTLP request's size) and one item alone past the maximum", async () => {
  const big = (i: number): StoreInput => {
    const payload = { session_id: `s-${i}`, body: "é".repeat(2_000 + i), more: "😀".repeat(300) };
    return {
      kind: "trace",
      tenantId: "t1",
      serviceName: "svc",
      payload: payload as never,
      payloadText: JSON.stringify(payload),
    };
  };
  const inputs = Array.from({ length: 500 }, (_, i) => big(i));
  for (const maxBytes of [1_000, 100_000, 4 * 1024 * 1024 + 65_536]) {
    const old = oldBatchMessages(inputs, "r", maxBytes);
    const now = await batchMessages(inputs, "r", maxBytes, async () => {});
    expect(now).toHaveLength(old.length);
    for (let i = 0; i < old.length; i++) expect(Buffer.from(now[i].data).equals(Buffer.from(old[i].text))).toBe(true);
  }
});

test("an id with a prefix is the id of the prefix and the source as one text", () => {
  fc.assert(
    fc.property(input, text, text, (i, prefix, source) => {
      expect(messageIdFor({ ...i, idPrefix: prefix, idSource: source })).toBe(
        messageIdFor({ ...i, idPrefix: undefined, idSource: `${prefix}${source}` }),
      );
    }),
    { numRuns: 500 },
  );
  const base = { kind: "trace" as const, tenantId: "t", serviceName: "s", payload: {} as never };
  // The OTLP doors' ids as they were: "otlp\n" and the payload's JSON in one string.
  expect(messageIdFor({ ...base, idPrefix: "otlp\n", idSource: '{"a":1}' })).toBe(
    messageIdFor({ ...base, idSource: 'otlp\n{"a":1}' }),
  );
  expect(messageIdFor({ ...base, idPrefix: "otlp\n", idSource: '{"a":1}' })).not.toBe(
    messageIdFor({ ...base, idSource: '{"a":1}' }),
  );
});
