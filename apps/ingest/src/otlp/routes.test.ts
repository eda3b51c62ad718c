import { describe, expect, test } from "bun:test";
import { fakePipeline, heldBody, jsonRequest, unreadBody } from "../../test/fake-pipeline.ts";
import { createOtlpIngest } from "./routes.ts";

// The OTLP handler on its own, over a pipeline of fakes (test/otlp-ingest.test.ts drives it
// through the app with real NATS and every client encoding).
const kv = (key: string, value: string | number) => ({
  key,
  value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
});
const exportOf = (attrs: Record<string, string | number>) => ({
  resourceSpans: [
    {
      resource: { attributes: [kv("service.name", "notes-app")] },
      scopeSpans: [
        {
          scope: { name: "test" },
          spans: [
            {
              traceId: "ab".repeat(16),
              spanId: "01".repeat(8),
              name: "chat",
              kind: 3,
              startTimeUnixNano: "1760000000000000000",
              endTimeUnixNano: "1760000001000000000",
              attributes: Object.entries(attrs).map(([k, v]) => kv(k, v)),
            },
          ],
        },
      ],
    },
  ],
});

/** An export of 10 model-call spans (one trace): a request whose count sets the estimate to 10. */
function tenCalls() {
  const call = exportOf({
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
  });
  const scope = call.resourceSpans[0].scopeSpans[0];
  scope.spans = Array.from({ length: 10 }, (_, i) => ({
    ...scope.spans[0],
    spanId: (i + 1).toString(16).padStart(16, "0"),
  }));
  return call;
}

function handler(opts: Parameters<typeof fakePipeline>[0] = {}) {
  const fake = fakePipeline(opts);
  const otlp = createOtlpIngest({
    authenticate: fake.pipeline.authenticate,
    reserveRateTokens: fake.pipeline.reserveRateTokens,
    storeAll: fake.pipeline.storeAll,
    turn: fake.pipeline.turn,
    maxBodyBytes: fake.pipeline.maxBodyBytes,
    logger: fake.pipeline.logger,
  });
  return { otlp, stored: fake.stored };
}

describe("OTLP traces handler", () => {
  test("a model-call span is stored as a trace; a span without GenAI meaning is accepted and not stored", async () => {
    const { otlp, stored } = handler();
    const call = exportOf({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.usage.input_tokens": 4,
      "gen_ai.usage.output_tokens": 2,
    });
    const res = await otlp("traces", jsonRequest("/v1/traces", call), "r1", undefined);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(stored.map((s) => [s.kind, s.serviceName, (s.payload as any).request.model])).toEqual([
      ["trace", "notes-app", "gpt-4o-mini"],
    ]);
    const plain = await otlp("traces", jsonRequest("/v1/traces", exportOf({ "http.method": "GET" })), "r2", undefined);
    expect(plain.status).toBe(200);
    expect(stored.length).toBe(1);
  });

  test("failures answer a google.rpc.Status with the contract's error field", async () => {
    const { otlp } = handler();
    const res = await otlp("traces", jsonRequest("/v1/traces", "{"), "r", undefined);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 3, error: expect.any(String) });
    const text = await otlp(
      "traces",
      jsonRequest("/v1/traces", "{}", { "content-type": "text/plain" }),
      "r",
      undefined,
    );
    expect(text.status).toBe(415);
  });
});

describe("OTLP rate limit", () => {
  /** An export of `n` model-call spans (distinct ids), padded to about `padBytes`. */
  const spans = (n: number, padBytes = 0) => {
    const one = exportOf({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.usage.input_tokens": 4,
      pad: "x".repeat(Math.ceil(padBytes / Math.max(1, n))),
    });
    const template = one.resourceSpans[0].scopeSpans[0].spans[0];
    one.resourceSpans[0].scopeSpans[0].spans = Array.from({ length: n }, (_, i) => ({
      ...template,
      spanId: (i + 1).toString(16).padStart(16, "0"),
    }));
    return JSON.stringify(one);
  };

  test("charges one token per span, not per request", async () => {
    let t = 0;
    const { otlp, stored } = handler({ rateLimit: { perSecond: 1, burst: 10 }, now: () => t });
    const ok = await otlp("traces", jsonRequest("/v1/traces", spans(4)), "r1", undefined);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("ratelimit-remaining")).toBe("6");
    expect(stored.length).toBe(4);
    expect((await otlp("traces", jsonRequest("/v1/traces", spans(4)), "r2", undefined)).status).toBe(200);
    // 2 tokens left cannot hold this credential's usual 4 spans: refused before reading, 429 + Retry-After.
    const limited = await otlp("traces", jsonRequest("/v1/traces", spans(1)), "r3", undefined);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(await limited.json()).toMatchObject({ code: 8, error: expect.stringContaining("rate limit") });
    expect(stored.length).toBe(8);
    // More spans than the burst can ever grant: 413, and the request is charged (it was read).
    t += 60_000;
    const over = await otlp("traces", jsonRequest("/v1/traces", spans(11)), "r4", undefined);
    expect(over.status).toBe(413);
    expect((await over.json()).error).toContain("11 spans in one request exceed");
    expect(stored.length).toBe(8);
  });

  test("log records are charged one token each", async () => {
    const { otlp } = handler({ rateLimit: { perSecond: 1, burst: 10 } });
    const record = (i: number) => ({
      timeUnixNano: "1760000000000000000",
      body: { stringValue: `line ${i}` },
      attributes: [kv("session.id", "s-1")],
    });
    const logs = {
      resourceLogs: [
        {
          resource: { attributes: [kv("service.name", "notes-app")] },
          scopeLogs: [{ scope: { name: "t" }, logRecords: [0, 1, 2].map(record) }],
        },
      ],
    };
    const res = await otlp("logs", jsonRequest("/v1/logs", logs), "r", undefined);
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-remaining")).toBe("7");
  });

  test("a herd admitted on a small estimate decodes one body: the others are refused before decoding", async () => {
    const { otlp, stored } = handler({ rateLimit: { perSecond: 1, burst: 10 } });
    const call = tenCalls();
    const first = heldBody(JSON.stringify(call));
    const garbage = Array.from({ length: 4 }, () => heldBody("{ not json")); // a 400 if decoded
    const send = (body: ReadableStream<Uint8Array>) => otlp("traces", jsonRequest("/v1/traces", body), "r", undefined);
    const answers = [first, ...garbage].map((h) => send(h.body));
    await Bun.sleep(10); // each admitted and waiting for its body
    first.release();
    expect((await answers[0]).status).toBe(200); // 10 spans counted: the estimate is now 10
    for (const h of garbage) h.release();
    expect((await Promise.all(answers.slice(1))).map((r) => r.status)).toEqual([429, 429, 429, 429]);
    expect(stored.length).toBe(10);
  });

  test("a herd's others wait for the door's probe before their bodies are read, then are refused unread", async () => {
    const { otlp, stored } = handler({ rateLimit: { perSecond: 1, burst: 10 } });
    const call = tenCalls();
    const first = heldBody(JSON.stringify(call));
    const others = Array.from({ length: 4 }, () => unreadBody(JSON.stringify(call)));
    const send = (body: ReadableStream<Uint8Array>) => otlp("traces", jsonRequest("/v1/traces", body), "r", undefined);
    const answers = [first.body, ...others.map((o) => o.body)].map(send);
    await Bun.sleep(10); // all admitted on the estimate of 1; the first is the probe, its body held
    expect(others.map((o) => o.pulled())).toEqual([0, 0, 0, 0]);
    first.release();
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 429, 429, 429, 429]);
    expect(others.map((o) => o.pulled())).toEqual([0, 0, 0, 0]); // refused unread
    expect(stored.length).toBe(10);
  });

  test("a refusal reads nothing of the body, whether it holds 1 KB or 1 MB (gzip or not)", async () => {
    const { otlp } = handler({ rateLimit: { perSecond: 1, burst: 10 }, maxBodyBytes: 4 * 1024 * 1024 });
    expect((await otlp("traces", jsonRequest("/v1/traces", spans(10)), "r", undefined)).status).toBe(200);
    for (const [size, gzip] of [
      [1024, false],
      [1024 * 1024, false],
      [1024 * 1024, true],
    ] as const) {
      const text = spans(10, size);
      const unread = unreadBody(gzip ? Bun.gzipSync(new TextEncoder().encode(text)) : text);
      const headers: Record<string, string> = gzip ? { "content-encoding": "gzip" } : {};
      const res = await otlp("traces", jsonRequest("/v1/traces", unread.body, headers), "r", undefined);
      expect({ size, gzip, status: res.status, pulled: unread.pulled() }).toEqual({
        size,
        gzip,
        status: 429,
        pulled: 0,
      });
    }
  });
});

describe("OTLP beside other requests (issue 41)", () => {
  test("a quiet request is answered while a large admitted body is still being decoded", async () => {
    const fake = fakePipeline({ maxBodyBytes: 4 * 1024 * 1024 });
    const oneCall = exportOf({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
    });
    const call = tenCalls();
    const scope = call.resourceSpans[0].scopeSpans[0];
    const large = JSON.stringify({
      ...call,
      resourceSpans: [
        {
          ...call.resourceSpans[0],
          scopeSpans: [
            {
              ...scope,
              spans: Array.from({ length: 1000 }, (_, i) => ({
                ...scope.spans[0],
                spanId: (i + 1).toString(16).padStart(16, "0"),
              })),
            },
          ],
        },
      ],
    });
    // What happened, in order: each request's spans counted (after its body is decoded), and the
    // quiet request's answer. No clock: the order of event-loop turns is the evidence.
    const events: string[] = [];
    let quiet: Promise<Response> | undefined;
    const otlp = createOtlpIngest({
      authenticate: fake.pipeline.authenticate,
      reserveRateTokens: (id, door) => {
        const reservation = fake.pipeline.reserveRateTokens(id, door);
        let confirms = 0;
        return {
          ...reservation,
          // The large request's second confirm is the one just before its body is decoded: the
          // quiet request is sent then.
          confirm: () => {
            if (!quiet && ++confirms === 2)
              quiet = otlp("traces", jsonRequest("/v1/traces", oneCall), "quiet", undefined).then((res) => {
                events.push(`quiet answered ${res.status}`);
                return res;
              });
            return reservation.confirm();
          },
          settle: (count, noun) => {
            events.push(`counted ${count}`);
            return reservation.settle(count, noun);
          },
        };
      },
      storeAll: fake.pipeline.storeAll,
      turn: fake.pipeline.turn,
      maxBodyBytes: fake.pipeline.maxBodyBytes,
      logger: fake.pipeline.logger,
    });
    const res = await otlp("traces", jsonRequest("/v1/traces", large), "large", undefined);
    expect(res.status).toBe(200);
    expect((await quiet!).status).toBe(200);
    expect(events).toEqual(["counted 1", "quiet answered 200", "counted 1000"]);
    expect(fake.stored.length).toBe(1001);
  });
});
