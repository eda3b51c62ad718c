// The doors with an offload (otlp/handle.ts, batch.ts) answer as without one: status, body,
// headers, stored items, ledger reports and counts, and the published messages' bytes and headers.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { MsgHdrs } from "@nats-io/transport-node";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import { createLogger } from "@cellar/shared/logger";
import { INGEST_DOOR_HEADER } from "@cellar/shared/nats/catalogue";
import { createTopology } from "@cellar/shared/nats/topology";
import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { chatTrace } from "../../../../test/helpers/payloads.ts";
import { fakePipeline, jsonRequest } from "../../test/fake-pipeline.ts";
import { postBatch } from "../batch.ts";
import { countedDoor } from "../ledger.ts";
import { type OtlpJob, otlpItems } from "../otlp/items.ts";
import { createOtlpIngest } from "../otlp/routes.ts";
import type { IngestPipeline } from "../pipeline.ts";
import { createPublishing } from "../publish.ts";
import { createOffload } from "./pool.ts";
import { KEYS, spanArb, tracesOf } from "./test-requests.ts";

const logger = createLogger("silent");
const offload = createOffload({
  workers: 1,
  workerUrl: new URL("./worker.ts", import.meta.url),
  minBytes: 256, // generated gzip bodies are a few hundred bytes to a few KB
  logger,
});
afterAll(() => offload.close());

/** The stored items as (kind, service, id, payload), whether stored item by item or in built messages. */
const storedItems = (fake: ReturnType<typeof fakePipeline>) => [
  ...fake.stored.map((s) => ({ kind: s.kind, serviceName: s.serviceName, messageId: s.messageId, payload: s.payload })),
  ...fake.built.flatMap((m) => JSON.parse(new TextDecoder().decode(m.data)).items),
];

/** The pipeline's `offloaded` over the shared test pool, with a fixed receivedAt (pipeline.ts builds it the same way). */
const offloadedAt =
  (receivedAt: string, maxMessageBytes: number): IngestPipeline["offloaded"] =>
  async (tenantId, task, size, job) =>
    size < offload.minBytes ? undefined : offload.run(tenantId, task, { ...job, receivedAt, maxMessageBytes } as never);

describe("the OTLP door with an offload answers as without one", () => {
  function door(withOffload: boolean, rateLimit?: { perSecond: number; burst: number }) {
    const fake = fakePipeline({ rateLimit, now: () => 0 });
    const otlp = createOtlpIngest({
      ...fake.pipeline,
      offloaded: withOffload ? offloadedAt("2026-11-29T03:00:00.000Z", 1e6) : undefined,
    });
    const items = () => storedItems(fake);
    return { otlp, items, built: fake.built };
  }
  const GZIP = { "content-encoding": "gzip" };
  const gz = (text: string | Uint8Array) =>
    Bun.gzipSync((typeof text === "string" ? new TextEncoder().encode(text) : text) as Uint8Array<ArrayBuffer>);
  const protobuf = (json: unknown, gzip = false) =>
    new Request("http://ingest.test/v1/traces", {
      method: "POST",
      headers: {
        authorization: "Bearer good",
        "content-type": "application/x-protobuf",
        ...(gzip ? GZIP : {}),
      },
      body: (gzip ? gz(encodeRequestFromJson("traces", json)) : encodeRequestFromJson("traces", json)) as BodyInit,
    });

  test("stored items, partial success, an undecodable body and a request past the burst: the same answers", async () => {
    const spans = fc.sample(spanArb, { numRuns: 120, seed: 41 });
    const body = tracesOf([
      { service: "notes-app", spans: spans.slice(0, 60) },
      { service: "bad service!", spans: spans.slice(60, 70) },
      { service: "billing", spans: spans.slice(70) },
    ]);
    const cases: Array<[string, () => Request, { perSecond: number; burst: number } | undefined]> = [
      ["json", () => jsonRequest("/v1/traces", body), undefined],
      ["protobuf", () => protobuf(body), undefined],
      ["garbage", () => jsonRequest("/v1/traces", `{"resourceSpans":[${"1,".repeat(2000)}`), undefined],
      ["past the burst", () => jsonRequest("/v1/traces", body), { perSecond: 10, burst: 100 }],
      // gzip, as OTel exporters send: inflated on the thread (by the size its trailer states).
      ["gzip json", () => jsonRequest("/v1/traces", gz(JSON.stringify(body)), GZIP), undefined],
      ["gzip protobuf", () => protobuf(body, true), undefined],
      ["gzip cut short", () => jsonRequest("/v1/traces", gz(JSON.stringify(body)).subarray(0, 900), GZIP), undefined],
      ["gzip bomb", () => jsonRequest("/v1/traces", gz(" ".repeat(5 * 1024 * 1024)), GZIP), undefined],
    ];
    const statuses: number[] = [];
    for (const [name, request, rateLimit] of cases) {
      const answers = [];
      for (const withOffload of [false, true]) {
        const d = door(withOffload, rateLimit);
        const res = await d.otlp("traces", request(), "r1", undefined);
        const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== "x-request-id"));
        answers.push({ status: res.status, body: await res.text(), headers, items: d.items() });
        // The offloaded door really took the thread for a stored request (its messages were built there).
        if (withOffload && res.status === 200) expect(d.built.length).toBeGreaterThan(0);
      }
      expect({ name, ...answers[1] }).toEqual({ name, ...answers[0] });
      statuses.push(answers[0].status);
      if (name === "json") {
        expect(answers[0].status).toBe(200);
        expect(answers[0].items.length).toBeGreaterThan(20);
        expect(answers[0].body).toContain("rejectedSpans");
      }
    }
    expect(statuses).toEqual([200, 200, 400, 413, 200, 200, 400, 413]);
  });
});

describe("built messages are published and counted as the loop's own", () => {
  test("the same subjects, bytes, headers (the door the ledger recounts) and ledger counts as storeAll", async () => {
    const spans = fc.sample(spanArb, { numRuns: 80, seed: 7 });
    const body = tracesOf([
      { service: "notes-app", spans: spans.slice(0, 50) },
      { service: "billing", spans: spans.slice(50) },
    ]);
    const job: OtlpJob = {
      key: KEYS[0],
      signal: "traces",
      encoding: "json",
      bytes: new TextEncoder().encode(JSON.stringify(body)),
      receivedAt: "2026-11-29T03:00:00.000Z",
      maxMessageBytes: 20_000,
    };
    const items = await otlpItems(job.key, job.signal, job.bytes, job.encoding, async () => {});
    const built = await offload.run(KEYS[0].tenantId, "otlp", job);
    if (!built?.built) throw new Error("not built");
    expect(built.messages.length).toBeGreaterThan(1);
    const ways: Array<{ published: typeof published; counts: Record<string, number> }> = [];
    let published: Array<{ subject: string; data: Uint8Array; headers: Record<string, string[]> }> = [];
    for (const way of ["loop", "thread"] as const) {
      published = [];
      const js = {
        publish: (subject: string, data: Uint8Array, opts: { headers?: MsgHdrs }) => {
          const headers = Object.fromEntries(
            [...(opts.headers?.keys() ?? [])].map((k) => [k, opts.headers!.values(k)]),
          );
          published.push({ subject, data, headers });
          return Promise.resolve({ stream: "INGEST", seq: published.length, duplicate: false });
        },
      } as never;
      // Summed per tenant, service, stage and reason (the loop adds 1 an item, a built message n a service).
      const counts: Record<string, number> = {};
      const ledger = {
        add: (tenant: string, service: string, stage: string, reason: string, n: number) => {
          const at = `${tenant} ${service} ${stage} ${reason}`;
          counts[at] = (counts[at] ?? 0) + n;
        },
      } as unknown as LedgerCounter;
      const publishing = createPublishing({
        js,
        topology: createTopology(),
        logger,
        now: () => new Date(job.receivedAt),
        maxBodyBytes: 1024 * 1024,
        maxMessageBytes: job.maxMessageBytes,
        publishTimeoutMs: 1_000,
        maxInFlight: 10_000,
      });
      const counted = countedDoor({ ...publishing, ledger, now: () => new Date(job.receivedAt) }, "otlp");
      if (way === "loop") await counted.storeAll!(structuredClone(items.inputs));
      else await counted.storeBuilt!(built.messages);
      ways.push({ published, counts });
    }
    expect(ways[0].published[0].headers[INGEST_DOOR_HEADER]).toEqual(["otlp"]);
    expect(Object.values(ways[0].counts).reduce((a, b) => a + b, 0)).toBe(items.inputs.length);
    const text = (w: (typeof ways)[0]) => w.published.map((p) => ({ ...p, data: new TextDecoder().decode(p.data) }));
    expect({ ...ways[1], published: text(ways[1]) }).toEqual({ ...ways[0], published: text(ways[0]) });
  });
});

describe("the batch door with an offload answers as without one", () => {
  const trace = (sessionId: string, content: string) =>
    chatTrace({ sessionId, messages: [{ role: "user", content }], reply: "Hello." }) as Record<string, any>;
  /** A generated item: valid traces, events and scores, and the ways an item or its body is refused. */
  const itemArb = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 300 }))
        .map(([s, c]) => ({ type: "trace", body: trace(`s-${s}`, c) })),
    },
    {
      weight: 2,
      arbitrary: fc.string({ maxLength: 8 }).map((s) => ({
        type: "event",
        body: { name: "checkout", service_name: "shop", session_id: s, timestamp: "2025-03-01T10:00:00+02:00" },
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .string({ maxLength: 8 })
        .map((s) => ({ type: "score", body: { session_id: s, name: "thumbs", value: true } })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { type: "trace", body: "not an object" },
        { type: "event", body: {} },
        { type: "score", body: { name: "x" } },
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ maxLength: 5 })
        .map((s) => ({ type: "trace", body: { ...trace("s", "x"), start_time: s } })),
    },
  );
  const ledgerArb = fc.oneof(
    fc.constant(undefined),
    fc.constant({ service_name: "shop", sdk: "ts", instance: "i-1", counts: { queued: 5, dropped_queue_full: 1 } }),
    fc.constant("not a report"),
  );
  /** A whole body: usually an envelope of items, sometimes one the door refuses whole. */
  const bodyArb = fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.array(itemArb, { minLength: 1, maxLength: 60 }), ledgerArb)
        .map(([items, ledger]) => JSON.stringify({ items, ...(ledger === undefined ? {} : { ledger }) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(itemArb, { minLength: 5, maxLength: 10 })
        .map((items) => `${JSON.stringify({ items }).slice(0, -1)},"items":[]}`),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(itemArb, { minLength: 5, maxLength: 10 })
        .map((items) => JSON.stringify({ items }).slice(0, -3)),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(itemArb, { minLength: 5, maxLength: 10 })
        .map((items) => JSON.stringify({ items: [...items, { type: "span", body: {} }] })),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(itemArb, { minLength: 5, maxLength: 10 })
        .map((items) => JSON.stringify({ items }).replace('"type":', '"type":"trace","type":')),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        JSON.stringify({ items: Array.from({ length: 1001 }, () => ({ type: "event", body: {} })) }),
      ),
    },
  );

  /** The body as sent: as is, gzip, or gzip cut short (not valid gzip). */
  const codingArb = fc.constantFrom("none", "gzip", "gzip", "cut");
  const sent = (text: string, coding: string): [string | Uint8Array, Record<string, string>] => {
    if (coding === "none") return [text, {}];
    const gz = Bun.gzipSync(new TextEncoder().encode(text));
    return [coding === "cut" ? gz.subarray(0, Math.floor(gz.length / 2)) : gz, { "content-encoding": "gzip" }];
  };

  async function answer(
    text: string,
    coding: string,
    withOffload: boolean,
    rateLimit?: { perSecond: number; burst: number },
  ) {
    const fake = fakePipeline({ rateLimit, now: () => 0, maxBodyBytes: 4 * 1024 * 1024 });
    const reports: unknown[] = [];
    const refused: number[] = [];
    const pipeline: IngestPipeline = {
      ...fake.pipeline,
      sdkReport: (given) => reports.push(given),
      refuseItems: (n) => refused.push(n),
      offloaded: withOffload ? offloadedAt("2026-11-29T03:00:00.000Z", 20_000) : undefined,
    };
    const [body, headers] = sent(text, coding);
    const res = await postBatch(pipeline, jsonRequest("/raw/batch", body, headers), "r1", undefined);
    const stored = storedItems(fake);
    return {
      status: res.status,
      body: await res.json(),
      headers: Object.fromEntries(res.headers),
      stored: JSON.parse(JSON.stringify(stored)),
      reports,
      refused,
      offloaded: fake.built.length > 0,
    };
  }

  test("generated batches, whole-batch refusals and a batch past the burst: the same answers, items, ledger reports", async () => {
    const seen = { offloaded: 0, partial: 0, refusedWhole: 0, gzipOffloaded: 0, notGzip: 0 };
    await fc.assert(
      fc.asyncProperty(bodyArb, codingArb, fc.boolean(), async (text, coding, limited) => {
        const rateLimit = limited ? { perSecond: 10, burst: 12 } : undefined;
        const loop = await answer(text, coding, false, rateLimit);
        const thread = await answer(text, coding, true, rateLimit);
        expect({ ...thread, offloaded: null }).toEqual({ ...loop, offloaded: null });
        if (thread.offloaded) seen.offloaded++;
        if (loop.body.status === "partial") seen.partial++;
        if (loop.status === 400) seen.refusedWhole++;
        if (coding === "gzip" && thread.offloaded) seen.gzipOffloaded++;
        if (loop.body.error === "body is not valid gzip") seen.notGzip++;
      }),
      { numRuns: 160 },
    );
    expect(seen.offloaded).toBeGreaterThan(10);
    expect(seen.partial).toBeGreaterThan(5);
    expect(seen.refusedWhole).toBeGreaterThan(3);
    expect(seen.gzipOffloaded).toBeGreaterThan(5);
    expect(seen.notGzip).toBeGreaterThan(3);
  }, 60_000);

  test("a batch of more items than the burst: the same refusal on the thread as on the loop", async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ type: "trace", body: trace(`s-${i}`, "x".repeat(200)) }));
    for (const coding of ["none", "gzip"]) {
      const text = JSON.stringify({ items });
      const loop = await answer(text, coding, false, { perSecond: 10, burst: 12 });
      expect(loop.status).toBe(413);
      expect(await answer(text, coding, true, { perSecond: 10, burst: 12 })).toEqual({ ...loop, offloaded: false });
    }
  });

  test("a gzip bomb is refused as it inflates past the body limit (413), on the thread as on the loop", async () => {
    const bomb = `{"items":[${" ".repeat(5 * 1024 * 1024)}]}`;
    const [loop, thread] = [await answer(bomb, "gzip", false), await answer(bomb, "gzip", true)];
    expect(loop.status).toBe(413);
    expect(thread).toEqual(loop);
  });
});
