import { describe, expect, test } from "bun:test";
import { chatTrace } from "../../../test/helpers/payloads.ts";
import { fakePipeline, heldBody, jsonRequest, unreadBody } from "../test/fake-pipeline.ts";
import { BATCH_ITEM_TYPES, MAX_BATCH_ITEMS, postBatch } from "./batch.ts";
import { postRaw } from "./raw.ts";

const trace = (sessionId = "s-1") =>
  chatTrace({ sessionId, messages: [{ role: "user", content: "Hi" }], reply: "Hello." }) as Record<string, any>;
const event = (sessionId = "s-1") => ({
  name: "checkout",
  service_name: "support-bot",
  session_id: sessionId,
  timestamp: "2025-03-01T10:00:00+02:00",
});

async function batch(body: unknown, opts: Parameters<typeof fakePipeline>[0] = {}, headers = {}) {
  const fake = fakePipeline(opts);
  const res = await postBatch(fake.pipeline, jsonRequest("/raw/batch", body, headers), "req-1", "127.0.0.1");
  return { status: res.status, body: (await res.json()) as any, headers: res.headers, stored: fake.stored };
}

describe("postBatch", () => {
  test("answers each item on its own and stores only the accepted ones, in order", async () => {
    const bad = trace();
    delete bad.session_id;
    const r = await batch({
      items: [
        { type: "trace", body: trace("a") },
        { type: "event", body: event("b") },
        { type: "trace", body: bad },
        { type: "event", body: "not an object" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: "partial",
      items: [
        { status: "accepted" },
        { status: "accepted" },
        { status: "refused", error: "invalid body.session_id: required" },
        { status: "refused", error: "body must be a JSON object" },
      ],
    });
    expect(r.stored.map((s) => [s.kind, (s.payload as any).session_id])).toEqual([
      ["trace", "a"],
      ["event", "b"],
    ]);
    // Validation normalised the event's timestamp to UTC, as the single door does.
    expect((r.stored[1].payload as any).timestamp).toBe("2025-03-01T08:00:00.000Z");
  });

  test("an item gets the message id its single door gives the same body", async () => {
    for (const [type, body, path] of [
      ["trace", trace(), "/raw/traces"],
      ["event", event(), "/raw/events"],
    ] as const) {
      const text = JSON.stringify(body);
      const single = fakePipeline();
      const kind = type === "trace" ? "trace" : "event";
      expect((await postRaw(single.pipeline, kind, jsonRequest(path, text), "r", undefined)).status).toBe(200);
      const r = await batch(`{"items":[{"type":"${type}","body":${text}}]}`);
      expect(r.body.status).toBe("success");
      expect(r.stored[0].messageId).toBe(single.stored[0].messageId);
    }
  });

  test("the whole batch is refused for a broken envelope, naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      ["[]", "body must be a JSON object"],
      ["{", "body is not valid JSON"],
      [{}, "invalid items: required"],
      [{ items: {} }, "invalid items: required"],
      [{ items: [] }, "invalid items: must hold at least 1 item"],
      [{ items: Array(MAX_BATCH_ITEMS + 1).fill({ type: "event", body: event() }) }, "invalid items: at most 1000"],
      [{ items: [{ type: "trace", body: trace() }, 7] }, "invalid items[1]: must be an object"],
      [{ items: [{ type: "span", body: {} }] }, 'invalid items[0].type: must be one of "trace", "event", "score"'],
      [{ items: [{ type: "__proto__", body: {} }] }, "invalid items[0].type"],
      [{ items: [{ body: {} }] }, "invalid items[0].type"],
      ['{"items":[{"type":"event","body":{"name":"a","name":"b"}}]}', "invalid items[0].body.name: duplicate key"],
    ];
    for (const [body, error] of cases) {
      const r = await batch(body);
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: expect.stringContaining(error) });
      expect(r.stored).toEqual([]);
    }
  });

  test("the rate limit counts items; a batch the bucket cannot hold is refused before it is read; one larger than the burst is told to split", async () => {
    const items = (n: number) => ({
      items: Array.from({ length: n }, (_, i) => ({ type: "event", body: event(`s${i}`) })),
    });
    let t = 0;
    const fake = fakePipeline({ rateLimit: { perSecond: 1, burst: 5 }, now: () => t });
    const send = (n: number) => postBatch(fake.pipeline, jsonRequest("/raw/batch", items(n)), "r", undefined);
    const three = await send(3);
    expect(three.status).toBe(200);
    expect(three.headers.get("ratelimit-remaining")).toBe("2");
    // The credential's batches hold 3 items lately: 2 tokens cannot hold the next one.
    const unread = unreadBody(JSON.stringify(items(3)));
    const tooMany = await postBatch(fake.pipeline, jsonRequest("/raw/batch", unread.body), "r", undefined);
    expect(tooMany.status).toBe(429);
    expect(tooMany.headers.get("retry-after")).toBe("1");
    expect(unread.pulled()).toBe(0);
    t += 1_000;
    expect((await send(2)).status).toBe(200);
    expect(fake.stored.length).toBe(5);
    t += 60_000;
    const over = await send(6);
    expect(over.status).toBe(413);
    expect((await over.json()).error).toContain("send at most 5 per request");
    // It was read, so it was paid for: the bucket owes, the next batch waits.
    expect((await send(1)).status).toBe(429);
    expect(fake.stored.length).toBe(5);
  });

  test("a herd admitted on a small estimate parses one body: the others are refused before they are inflated or parsed", async () => {
    const fake = fakePipeline({ rateLimit: { perSecond: 1, burst: 20 } });
    const send = (body: ReadableStream<Uint8Array>, headers = {}) =>
      postBatch(fake.pipeline, jsonRequest("/raw/batch", body, headers), "r", undefined);
    // Bodies held until released: every request is admitted (estimate 1) before any is counted.
    const first = heldBody(
      JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ type: "event", body: event(`s${i}`) })) }),
    );
    // Bodies that would be a 400 if they were parsed ("not valid JSON") or inflated ("not valid gzip").
    const plain = Array.from({ length: 4 }, () => heldBody("{ not json"));
    const gzip = Array.from({ length: 3 }, () => heldBody(new Uint8Array([1, 2, 3, 4])));
    const answers = [
      send(first.body),
      ...plain.map((h) => send(h.body)),
      ...gzip.map((h) => send(h.body, { "content-encoding": "gzip" })),
    ];
    await Bun.sleep(10); // each admitted and waiting for its body
    first.release();
    expect((await answers[0]).status).toBe(200); // counted: the estimate is now 20
    for (const h of [...plain, ...gzip]) h.release();
    const rest = await Promise.all(answers.slice(1));
    expect(rest.map((r) => r.status)).toEqual(Array(7).fill(429));
    expect(rest[0].headers.get("retry-after")).not.toBeNull();
    expect(fake.stored.length).toBe(20);
  });

  test("a herd whose bodies all arrive at once inflates one: the others wait for it to be counted, then are refused", async () => {
    const fake = fakePipeline({ rateLimit: { perSecond: 1, burst: 20 } });
    const send = (body: ReadableStream<Uint8Array>) =>
      postBatch(fake.pipeline, jsonRequest("/raw/batch", body, { "content-encoding": "gzip" }), "r", undefined);
    const items = Array.from({ length: 20 }, (_, i) => ({ type: "event", body: event(`s${i}`) }));
    const first = heldBody(Bun.gzipSync(new TextEncoder().encode(JSON.stringify({ items }))));
    // Not gzip: a 400 if it were inflated before the first body is counted.
    const others = Array.from({ length: 5 }, () => heldBody(new Uint8Array([1, 2, 3, 4])));
    const answers = [first, ...others].map((h) => send(h.body));
    await Bun.sleep(10); // each admitted on the estimate of 1, waiting for its body
    for (const h of [first, ...others]) h.release(); // every body in at once
    const statuses = (await Promise.all(answers)).map((r) => r.status);
    expect(statuses).toEqual([200, 429, 429, 429, 429, 429]);
    expect(fake.stored.length).toBe(20);
  });

  test("storage unavailable: 503 for the whole batch, nothing reported accepted", async () => {
    const r = await batch({ items: [{ type: "trace", body: trace() }] }, { failStore: true });
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("5");
    expect(r.body).toEqual({ error: expect.stringContaining("retry later") });
  });

  test("a gzip body is read like a plain one; a gzip bomb is refused at the body limit", async () => {
    const plain = JSON.stringify({ items: [{ type: "trace", body: trace() }] });
    const r = await batch(Bun.gzipSync(new TextEncoder().encode(plain)), {}, { "content-encoding": "gzip" });
    expect(r.body.status).toBe("success");
    const bomb = Bun.gzipSync(new TextEncoder().encode(`{"items":[${" ".repeat(1024 * 1024)}]}`));
    const big = await batch(bomb, { maxBodyBytes: 64 * 1024 }, { "content-encoding": "gzip" });
    expect(big.status).toBe(413);
    const other = await batch(plain, {}, { "content-encoding": "br" });
    expect(other.status).toBe(415);
  });

  test("a DSN's service applies per item: another service_name refuses that item only", async () => {
    const other = { ...event(), service_name: "other" };
    const r = await batch(
      {
        items: [
          { type: "event", body: event() },
          { type: "event", body: other },
        ],
      },
      { key: { kind: "dsn-server", serviceName: "support-bot" } },
    );
    expect(r.body.items[1]).toEqual({
      status: "refused",
      error: 'invalid body.service_name: "other" does not match this DSN\'s service',
    });
    expect(r.stored.map((s) => s.serviceName)).toEqual(["support-bot"]);
  });

  test("unauthenticated and non-JSON requests are refused whole", async () => {
    expect((await batch({ items: [] }, {}, { authorization: "Bearer bad" })).status).toBe(401);
    expect((await batch({ items: [] }, {}, { "content-type": "text/plain" })).status).toBe(415);
  });

  test("the item types are a table keyed by type", () => {
    expect(Object.keys(BATCH_ITEM_TYPES)).toEqual(["trace", "event", "score"]);
  });
});
