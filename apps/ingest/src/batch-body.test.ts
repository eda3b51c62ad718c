import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { HttpError } from "@cellar/shared/errors";
import { runAtOnce } from "@cellar/shared/steps";
import { chatTrace } from "../../../test/helpers/payloads.ts";
import { fakePipeline, jsonRequest } from "../test/fake-pipeline.ts";
import { readEnvelope, postBatch } from "./batch.ts";
import { splitJsonInSteps } from "@cellar/shared/json-steps";
import { BATCH_PATH, parseBatchJson } from "./batch-body.ts";
import { assertNoDuplicateKeys, parseJsonObject } from "./body.ts";
import { ledgerReportKeys } from "./ledger.ts";
import { largestParse, mutate, random, render } from "@cellar/shared/test-json";

/**
 * /raw/batch's body parsed in slices (batch-body.ts, issue 41) gives the same value and the same
 * error as the one-piece parse it replaced. The oracle is that code, kept here as it was
 * (batch.ts before: parseJsonObject, the envelope read, the duplicate-key check on the text).
 */
type Outcome = { error: string; status: number } | { value: string };

async function outcome(read: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { value: JSON.stringify(await read()) };
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return { error: err.message, status: err.status };
  }
}

const keysOf = (envelopeKeys: number | null, ledger: unknown) => {
  const reportKeys = ledger === undefined ? 0 : ledgerReportKeys(ledger);
  return envelopeKeys === null || reportKeys === null ? null : envelopeKeys + reportKeys;
};

/** The code before slicing (the oracle). */
const before = (text: string) =>
  outcome(async () => {
    const object = parseJsonObject(text);
    const envelope = await readEnvelope(object);
    assertNoDuplicateKeys(text, keysOf(envelope.keys, object.ledger));
    return { object, items: envelope.items };
  });

/** batch.ts now. */
const now = (text: string) =>
  outcome(async () => {
    const { object, keyTokens } = await parseBatchJson(text);
    const envelope = await readEnvelope(object);
    assertNoDuplicateKeys(text, keysOf(envelope.keys, object.ledger), keyTokens);
    return { object, items: envelope.items };
  });

const trace = (i: number) =>
  chatTrace({ sessionId: `s-${i}`, messages: [{ role: "user", content: `Hi ${i}` }], reply: "Hello." });

const itemArb = fc.oneof(
  { weight: 4, arbitrary: fc.nat(50).map((i) => ({ type: "trace", body: trace(i) })) },
  { weight: 2, arbitrary: fc.record({ type: fc.constantFrom("trace", "event", "score", "x"), body: fc.jsonValue() }) },
  { weight: 1, arbitrary: fc.jsonValue() },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.constantFrom("type", "body", "a", "items", "__proto__"), fc.jsonValue(), {
      maxKeys: 4,
    }),
  },
);

const ledgerArb = fc.oneof(
  fc.constant(undefined),
  fc.record({
    client: fc.constantFrom("c-1", "c-2"),
    seq: fc.nat(5),
    counts: fc.dictionary(fc.constantFrom("queued", "dropped_queue_full", "sent"), fc.nat(100)),
  }),
  fc.jsonValue(),
);

const envelopeArb = fc
  .record({
    items: fc.oneof({ weight: 8, arbitrary: fc.array(itemArb, { maxLength: 12 }) }, fc.jsonValue()),
    ledger: ledgerArb,
    extra: fc.dictionary(fc.constantFrom("a", "items ", "x", "b"), fc.jsonValue(), { maxKeys: 2 }),
    itemsFirst: fc.boolean(),
  })
  .map(({ items, ledger, extra, itemsFirst }) => {
    const rest = { ...extra, ...(ledger === undefined ? {} : { ledger }) };
    return itemsFirst ? { items, ...rest } : { ...rest, items };
  });

describe("parseBatchJson: the old answer for every body", () => {
  test("generated bodies, formatted at random", async () => {
    await fc.assert(
      fc.asyncProperty(envelopeArb, fc.integer(), async (envelope, seed) => {
        const text = render(envelope, random(seed));
        expect(await now(text)).toEqual(await before(text));
      }),
      { numRuns: 300 },
    );
  });

  test("the same bodies after random edits (broken JSON, repeated keys and items, stray brackets)", async () => {
    let differentFromValid = 0;
    await fc.assert(
      fc.asyncProperty(envelopeArb, fc.integer(), async (envelope, seed) => {
        const pick = random(seed);
        const text = mutate(render(envelope, pick), pick, ['"items"', '"body"', '"type"']);
        const old = await before(text);
        if ("error" in old && old.error !== "body is not valid JSON") differentFromValid++;
        expect(await now(text)).toEqual(old);
      }),
      { numRuns: 1500 },
    );
    // The edits reach past "not valid JSON" too (duplicates, envelope and item errors).
    expect(differentFromValid).toBeGreaterThan(20);
  });

  test("bodies at the scan's edges", async () => {
    const t = JSON.stringify({ type: "trace", body: trace(1) });
    const cases = [
      `{"items":[${t}}}`,
      `{"items":[${t}]]}`,
      `{"items":[${t}]}}`,
      `{"items":[]}`,
      `{"items":[ \n ]}`,
      `{"items":[,]}`,
      `{"items":[${t},]}`,
      `{"items":[,${t}]}`,
      `{"items":[${t},,${t}]}`,
      `{"items":{}}`,
      `{"items":5}`,
      `{"items":[${t}],"items":[${t}]}`,
      `{"items":[${t}],"items":5}`,
      `{"\\u0069tems":[${t}]}`,
      `{"it\\"ems":[${t}]}`,
      `{"a":"items","items":[${t}]}`,
      `{"a":"items" ,"b":{"items":[1]},"items":[${t}]}`,
      `{"x":{"items":5},"items":[${t}]}`,
      `{"items":[${t}]}x`,
      `{"items":[${t}]} {"items":[${t}]}`,
      `{"items":[${t}]`,
      `{"items":[${t}`,
      `{"items":["\\\\"]}`,
      `{"items":["\\\\\\""]}`,
      `{"items":["]"]}`,
      `{"items":[{"type":"trace","body":{"a":1,"a":2}}]}`,
      `{"items":[{"type":"trace","type":"trace","body":{}}]}`,
      `{"ledger":{"client":"c","seq":1,"counts":{"sent":1,"sent":2}},"items":[${t}]}`,
      `{"items":[${t}],"ledger":{"a":1,"a":1}}`,
      `[{"items":[${t}]}]`,
      `"items"`,
      `  {"items":[${t}]}  `,
      `\ufeff{"items":[${t}]}`,
      `{"items":[${"[".repeat(70)}${"]".repeat(70)}]}`,
      `{"items":[${"[".repeat(5000)}${"]".repeat(5000)}]}`,
      `{"items":[{"type":"trace","body":"\ud800"}]}`,
      `{"items":[1e999]}`,
      `{"items":[-0]}`,
      `{"items":[{"type":"trace","body":{"__proto__":{"a":1}}}]}`,
      `{"items":\u00a0[${t}]}`,
    ];
    for (const text of cases) expect({ text, outcome: await now(text) }).toEqual({ text, outcome: await before(text) });
  });
});

describe("parseBatchJson: in slices", () => {
  test("a step parses one item at most: no piece of a 1,000-item body is parsed in one call", async () => {
    const body = { items: Array.from({ length: 1000 }, (_, i) => ({ type: "trace", body: trace(i) })) };
    const text = JSON.stringify(body);
    const steps = splitJsonInSteps(text, BATCH_PATH);
    let stepCount = 0;
    const { largest } = await largestParse(() => {
      while (!steps.next().done) stepCount++;
    });
    expect(stepCount).toBeGreaterThanOrEqual(1000);
    expect(largest).toBeLessThan(text.length / 500);
    expect(runAtOnce(splitJsonInSteps(text, BATCH_PATH))).toEqual({ value: body, keyTokens: expect.any(Number) });
  });

  test("postBatch answers a 1,000-item batch without parsing its body in one piece", async () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({ type: "trace", body: trace(i) }));
    const text = JSON.stringify({ items });
    const fake = fakePipeline({ maxBodyBytes: 8 * 1024 * 1024 });
    const { result: res, largest } = await largestParse(() =>
      postBatch(fake.pipeline, jsonRequest("/raw/batch", text), "r", undefined),
    );
    expect(res.status).toBe(200);
    expect(fake.stored.length).toBe(1000);
    expect(largest).toBeLessThan(text.length / 500);
  });

  test("other work runs between the slices", async () => {
    const text = JSON.stringify({ items: Array.from({ length: 1000 }, (_, i) => ({ type: "trace", body: trace(i) })) });
    let turns = 0;
    let done = false;
    const tick = () => {
      turns++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const { object } = await parseBatchJson(text);
    done = true;
    expect((object.items as unknown[]).length).toBe(1000);
    expect(turns).toBeGreaterThanOrEqual(1000 / 50 - 1);
  });
});
