import { expect, test } from "bun:test";
import fc from "fast-check";
import type { MsgHdrs } from "@nats-io/transport-node";
import { INGEST_CHECKED, INGEST_CHECKED_HEADER } from "@cellar/shared/ingest-rules";
import { createLogger } from "@cellar/shared/logger";
import { ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import { createTopology } from "@cellar/shared/nats/topology";
import { chatTrace } from "../../../test/helpers/payloads.ts";
import { fakePipeline, jsonRequest } from "../test/fake-pipeline.ts";
import { postBatch } from "./batch.ts";
import { createPublishing, ingestMessage, messageText } from "./publish.ts";
import { postRaw } from "./raw.ts";

/**
 * The processor decodes a message ingest marked as checked (Cellar-Checked) with a shape check
 * only, not the second full walk of shared/ingest-rules.ts (docs/performance.md). That is sound
 * only if everything ingest publishes passes the full rules: checked here on generated bodies,
 * hostile ones included, through the real doors and the real publisher.
 */
const encoder = new TextEncoder();

function capturingPipeline() {
  const published: Array<{ subject: string; data: Uint8Array; headers: MsgHdrs | undefined }> = [];
  const js = {
    publish: (subject: string, data: string | Uint8Array, opts: { headers?: MsgHdrs }) => {
      published.push({ subject, data: typeof data === "string" ? encoder.encode(data) : data, headers: opts.headers });
      return Promise.resolve({ stream: "INGEST", seq: published.length, duplicate: false });
    },
  } as never;
  const { pipeline } = fakePipeline({ maxBodyBytes: 1024 * 1024 });
  const { store, storeAll } = createPublishing({
    js,
    topology: createTopology(),
    logger: createLogger("silent"),
    now: () => new Date(),
    maxBodyBytes: 1024 * 1024,
    publishTimeoutMs: 1_000,
    maxInFlight: 10_000,
  });
  return { pipeline: { ...pipeline, store, storeAll }, published };
}

/** Strings a client can send: any code point, NUL, controls, lone surrogates, blanks. */
const hostile = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[a-z][a-z0-9 .-]{0,12}$/) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "\u0000", "a\u0000b", "\ud800", "x\u001f", "\u2028") },
);
const instant = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2030-01-01T00:00:00Z"), noInvalidDate: true })
      .map((d) => d.toISOString()),
  },
  fc
    .date({ min: new Date("0050-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z"), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    "2026-11-23T10:00:00+23:00",
    "2026-11-23T10:00:00-23:59",
    "0000-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "soon",
  ),
);
const content = fc.oneof(
  hostile,
  fc.constant(null),
  fc.array(fc.record({ type: hostile, text: hostile }), { maxLength: 2 }),
);
const trace = fc.record(
  {
    provider: fc.constantFrom("openai", "anthropic"),
    session_id: hostile,
    start_time: instant,
    end_time: instant,
    environment: hostile,
    request: fc.record({
      model: hostile,
      messages: fc.array(fc.record({ role: fc.constantFrom("user", "assistant", "system", ""), content }), {
        minLength: 0,
        maxLength: 3,
      }),
    }),
    responses: fc.array(
      fc.record({
        id: hostile,
        object: fc.constant("chat.completion"),
        model: hostile,
        choices: fc.array(
          fc.record({
            index: fc.integer({ min: -1, max: 3 }),
            message: fc.record({ role: fc.constant("assistant"), content }),
            finish_reason: fc.oneof(fc.constant(null), hostile),
          }),
          { maxLength: 2 },
        ),
        usage: fc.record({
          prompt_tokens: fc.integer({ min: -1, max: 1000 }),
          completion_tokens: fc.nat(1000),
          total_tokens: fc.nat(2000),
        }),
      }),
      { minLength: 0, maxLength: 3 },
    ),
    extra: fc.jsonValue({ maxDepth: 3 }),
  },
  { requiredKeys: ["provider", "session_id", "start_time", "end_time", "request", "responses"] },
);
const event = fc.record(
  {
    name: hostile,
    session_id: hostile,
    timestamp: instant,
    severity_number: fc.integer({ min: 0, max: 30 }),
    attributes: fc.dictionary(hostile, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    trace_id: hostile,
  },
  { requiredKeys: ["name", "session_id", "timestamp"] },
);

test("everything ingest publishes is marked checked and passes every rule the processor would apply without the mark", async () => {
  const { pipeline, published } = capturingPipeline();
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        trace.map((b) => ["trace", b] as const),
        event.map((b) => ["event", b] as const),
      ),
      async ([kind, body]) => {
        const before = published.length;
        const single = await postRaw(
          pipeline,
          kind,
          jsonRequest(`/raw/${kind}s`, { ...body, service_name: "svc" }),
          "r",
          undefined,
        );
        const batch = await postBatch(
          pipeline,
          jsonRequest("/raw/batch", { items: [{ type: kind, body: { ...body, service_name: "svc" } }] }),
          "r",
          undefined,
        );
        expect(batch.status).toBe(200);
        expect(published.length - before).toBe(single.status === 200 ? 2 : 0);
        for (const m of published.slice(before)) {
          accepted++;
          expect(m.headers?.get(INGEST_CHECKED_HEADER)).toBe(INGEST_CHECKED);
          const marked = ingestStream.codec.decode(m.subject, m.data, m.headers);
          const full = ingestStream.codec.decode(m.subject, m.data, undefined);
          expect(full).toEqual({ ok: true, value: expect.anything() });
          expect(marked).toEqual(full);
          // A batch's items pass every rule one by one: none is rejected, marked or not.
          expect((full as { value: { rejected?: unknown } }).value.rejected).toBeUndefined();
          // The text itself is the normalised message (the full decode rewrites timestamps in
          // place), whether the publisher serialised the payload or spliced in the door's text.
          const text = new TextDecoder().decode(m.data);
          expect(JSON.parse(text)).toEqual((full as { value: unknown }).value);
          expect(JSON.stringify(JSON.parse(text))).toBe(text);
        }
      },
    ),
    { numRuns: 400 },
  );
  // The generators must reach the stored path, not only refusals.
  expect(accepted).toBeGreaterThan(150);
}, 60_000);

const message = (payload: Record<string, unknown>, kind = "trace") => ({
  kind,
  messageId: "m-1",
  tenantId: "00000000-0000-4000-8000-000000000001",
  serviceName: "svc",
  receivedAt: "2026-11-25T12:00:00.000Z",
  payload,
});
const goodTrace = () => {
  const t = chatTrace({ sessionId: "s", messages: [{ role: "user", content: "hi" }], reply: "hello" });
  return t as typeof t & Record<string, unknown>;
};
const decode = (value: unknown, marked: boolean) =>
  ingestStream.codec.decode(
    "cellar.ingest.trace",
    encoder.encode(JSON.stringify(value)),
    marked ? ingestCheckedHeaders() : undefined,
  );

test("messageText splices the payload's JSON into the same text as JSON.stringify of the message", () => {
  const payload = { session_id: 's\u2028"q"', name: "é😀", timestamp: "2026-11-25T12:00:00.000Z", n: [1, 2.5, null] };
  const input = { kind: "event" as const, tenantId: "t", serviceName: 'sv"c\n', payload: payload as never };
  const m = ingestMessage(input, "m-1", "2026-11-25T12:00:00.000Z");
  expect(messageText(m, JSON.stringify(payload))).toBe(JSON.stringify(m));
});

test("a marked message gets the shape check only, an unmarked one every rule; a wrong shape is refused either way", () => {
  // A rule only the full walk sees: the mark decides which check runs.
  const deep = goodTrace();
  deep.responses[0].choices[0].index = -1;
  expect(decode(message(deep), true).ok).toBe(true);
  expect(decode(message(deep), false)).toEqual({
    ok: false,
    error: expect.stringMatching(/^invalid payload/),
  });
  const good = message(goodTrace());
  expect(decode(good, true)).toEqual(decode(good, false));

  const broken: Array<[unknown, RegExp]> = [
    ["not an object", /^invalid body/],
    [{ ...message(goodTrace()), kind: "span" }, /^invalid kind/],
    [{ ...message(goodTrace()), tenantId: 7 }, /^invalid tenantId/],
    [message(goodTrace(), "event"), /^invalid payload\.name/],
    [{ ...message(goodTrace()), payload: [1] }, /^invalid payload: /],
    [message({ ...goodTrace(), start_time: undefined }), /^invalid payload\.start_time/],
    [message({ ...goodTrace(), request: { model: "m", messages: "hi" } }), /^invalid payload\.request/],
    [
      message({ ...goodTrace(), request: { model: "m", messages: [null] } }),
      /^invalid payload\.request\.messages\[0\]/,
    ],
    [message({ ...goodTrace(), responses: {} }), /^invalid payload\.responses/],
    [message({ ...goodTrace(), responses: [{ choices: [null], usage: {} }] }), /^invalid payload\.responses\[0\]/],
    [
      message({ name: "score", session_id: "s", value: "x".repeat(500), source: "api", idempotency_key: "k" }, "score"),
      /^invalid payload\.value/,
    ],
  ];
  for (const [value, error] of broken) {
    expect(decode(value, true)).toEqual({ ok: false, error: expect.stringMatching(error) });
    expect(decode(value, false).ok).toBe(false);
  }
});
