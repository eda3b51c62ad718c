import { describe, expect, test } from "bun:test";
import { Cellar, type CellarError, fnv1a32, sessionSampled, TRUNCATION_MARKER } from "../src/index.ts";
import { DSN, fakeIngest } from "./fake-ingest.ts";

const call = (session: string, content = "Hi") => ({
  session_id: session,
  request: { model: "gpt-4o-mini", messages: [{ role: "user", content }] },
  responses: [
    {
      id: "c1",
      object: "chat.completion",
      model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    },
  ],
  start_time: new Date("2025-03-01T10:00:00Z"),
  end_time: "2025-03-01T10:00:01Z",
});

function client(
  script: Parameters<typeof fakeIngest>[0] = [],
  options: Partial<ConstructorParameters<typeof Cellar>[0]> = {},
) {
  const ingest = fakeIngest(script);
  const errors: CellarError[] = [];
  const cellar = new Cellar({
    dsn: DSN,
    fetch: ingest.fetch,
    serverless: true,
    retryBaseMs: 1,
    onError: (e) => errors.push(e),
    ...options,
  });
  return { cellar, ingest, errors };
}

describe("Cellar client", () => {
  test("the DSN alone configures it: endpoint, service, bearer; items go through /raw/batch", async () => {
    const { cellar, ingest } = client();
    cellar.trace(call("s1"));
    cellar.session("s1").event("checkout", { attributes: { plan: "pro" } });
    expect(await cellar.flush()).toEqual({ sent: 2, refused: 0, dropped: 0, retried: 0, pending: 0 });
    expect(ingest.requests[0].url).toBe("http://ingest.test/raw/batch");
    expect(ingest.requests[0].headers.authorization).toBe(`Bearer ${DSN}`);
    expect(ingest.items().map((i) => [i.type, i.body.session_id])).toEqual([
      ["trace", "s1"],
      ["event", "s1"],
    ]);
    expect(ingest.items()[0].body).toMatchObject({ provider: "openai", start_time: "2025-03-01T10:00:00.000Z" });
  });

  test("retries network errors, 5xx, 408 and 429 (Retry-After honoured); never another 4xx", async () => {
    const { cellar, ingest, errors } = client([
      "network-error",
      { status: 503 },
      { status: 408 },
      { status: 429, headers: { "retry-after": "1" } },
    ]);
    cellar.trace(call("s1"));
    const result = await cellar.flush();
    expect(result).toMatchObject({ sent: 1, retried: 4, refused: 0 });
    const gap = ingest.requests[4].at - ingest.requests[3].at;
    console.log(`429 with Retry-After: 1 -> next attempt after ${gap} ms`);
    expect(gap).toBeGreaterThanOrEqual(990);
    expect(errors).toEqual([]);

    const refused = client([{ status: 400, body: { error: "invalid items: required" } }]);
    refused.cellar.trace(call("s2"));
    expect(await refused.cellar.flush()).toMatchObject({ sent: 0, refused: 1, retried: 0 });
    expect(refused.ingest.requests.length).toBe(1);
    expect(refused.errors[0]).toMatchObject({ kind: "refused", status: 400 });
  });

  test("per-item refusals are reported and counted, not retried", async () => {
    const { cellar, ingest, errors } = client(["refuse-odd"]);
    for (let i = 0; i < 4; i++) cellar.trace(call(`s${i}`));
    expect(await cellar.flush()).toMatchObject({ sent: 2, refused: 2, retried: 0 });
    expect(ingest.requests.length).toBe(1);
    expect(errors.map((e) => e.message)).toEqual([
      "trace refused: invalid body.session_id: required",
      "trace refused: invalid body.session_id: required",
    ]);
  });

  test("a full queue drops the newest items, counts and reports them", async () => {
    const { cellar, errors } = client([], { maxQueueItems: 3, maxBatchItems: 100 });
    for (let i = 0; i < 5; i++) cellar.trace(call(`s${i}`));
    expect(await cellar.flush()).toMatchObject({ sent: 3, dropped: 2 });
    expect(errors[0]).toMatchObject({ kind: "dropped" });
  });

  test("a 413 splits the batch; retries exhausted drop and count", async () => {
    const split = client([{ status: 413 }]);
    for (let i = 0; i < 4; i++) split.cellar.trace(call(`s${i}`));
    expect(await split.cellar.flush()).toMatchObject({ sent: 4, dropped: 0 });
    expect(split.ingest.requests.map((r) => r.items.length)).toEqual([4, 2, 2]);
    const down = client(Array(10).fill({ status: 502 }), { maxRetries: 2 });
    down.cellar.trace(call("s"));
    expect(await down.cellar.flush()).toMatchObject({ sent: 0, dropped: 1, retried: 2 });
  });

  test("sampling is by session, FNV-1a: a session is wholly in or out", async () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    const { cellar, ingest } = client([], { sampleRate: 0.5 });
    const sessions = Array.from({ length: 200 }, (_, i) => `session-${i}`);
    for (const s of sessions) {
      cellar.trace(call(s));
      cellar.session(s).event("e");
    }
    await cellar.flush();
    const kept = new Set(ingest.items().map((i) => i.body.session_id));
    for (const s of sessions) {
      const n = ingest.items().filter((i) => i.body.session_id === s).length;
      expect(n).toBe(sessionSampled(s, 0.5) ? 2 : 0);
    }
    expect(kept.size).toBeGreaterThan(60);
    expect(kept.size).toBeLessThan(140);
  });

  test("mask runs first, then the opt-in redactors; oversized content is cut with a marker", async () => {
    const { cellar, ingest } = client([], {
      mask: (p) => (p.session_id === "drop" ? null : { ...p, masked: true }),
      redact: ["emails", "cardNumbers", "secrets"],
      maxPayloadBytes: 20_000,
    });
    cellar.trace(call("drop"));
    cellar.trace(
      call(
        "s1",
        "mail ann@example.com, card 4111 1111 1111 1111, not 4111 1111 1111 1112, key sk-proj-abcdefghijklmnop1234 ok",
      ),
    );
    cellar.trace(call("s2", "x".repeat(100_000)));
    await cellar.flush();
    const [redacted, cut] = ingest.items().map((i) => i.body);
    expect(redacted.masked).toBe(true);
    expect(redacted.request.messages[0].content).toBe(
      "mail [email], card [card number], not 4111 1111 1111 1112, key [secret] ok",
    );
    const content = cut.request.messages[0].content as string;
    expect(content.length).toBeLessThan(20_000);
    expect(content).toContain(TRUNCATION_MARKER.split("%d")[0]);
  });

  test("never throws at the caller and never leaves an unhandled rejection", async () => {
    let unhandled = 0;
    const onUnhandled = () => unhandled++;
    process.on("unhandledRejection", onUnhandled);
    const throwing = (() => {
      throw new Error("boom");
    }) as unknown as typeof fetch;
    const cellar = new Cellar({
      dsn: DSN,
      fetch: throwing,
      serverless: true,
      maxRetries: 1,
      retryBaseMs: 1,
      onError: () => {
        throw new Error("a throwing hook");
      },
      mask: (p) => {
        if (p.session_id === "bad") throw new Error("a throwing mask");
        return p;
      },
    });
    cellar.trace(call("bad"));
    cellar.trace({} as never);
    cellar.trace(call("ok"));
    expect(await cellar.flush()).toMatchObject({ dropped: 2 });
    await Bun.sleep(10);
    process.off("unhandledRejection", onUnhandled);
    expect(unhandled).toBe(0);
  });

  test("a legacy DSN needs the endpoint setting; a bad DSN is refused at construction", () => {
    expect(() => new Cellar({ dsn: `svc-ing-s-${"a".repeat(32)}` })).toThrow("endpoint");
    const legacy = new Cellar({ dsn: `svc-ing-s-${"a".repeat(32)}`, endpoint: "https://in.test/", serverless: true });
    expect(legacy.endpoint).toBe("https://in.test");
    expect(() => new Cellar({ dsn: "cel_tk_abc" })).toThrow("svc-ing-s-");
  });

  test("gzip when it pays: a large batch goes compressed", async () => {
    const { cellar, ingest } = client();
    for (let i = 0; i < 20; i++) cellar.trace(call(`s${i}`, "long text ".repeat(50)));
    await cellar.flush();
    expect(ingest.requests[0].headers["content-encoding"]).toBe("gzip");
    expect(ingest.items().length).toBe(20);
  });

  test("shutdown flushes, then later calls are dropped and counted", async () => {
    const { cellar, ingest } = client();
    cellar.trace(call("s1"));
    expect(await cellar.shutdown()).toMatchObject({ sent: 1 });
    cellar.trace(call("s2"));
    expect(cellar.stats).toMatchObject({ sent: 1, dropped: 1 });
    expect(ingest.items().length).toBe(1);
  });

  test("wrapHandler sends before the handler's answer is returned", async () => {
    const { cellar, ingest } = client();
    const handler = cellar.wrapHandler(async (name: string) => {
      cellar.session("s").event(name);
      return "done";
    });
    expect(await handler("invoked")).toBe("done");
    expect(ingest.items().map((i) => i.body.name)).toEqual(["invoked"]);
  });

  test("every batch carries the ledger's cumulative counters; a retry carries the same figures", async () => {
    const { cellar, ingest } = client([{ status: 503 }, "refuse-odd"], { maxQueueItems: 3, sampleRate: 0.5 });
    // Sessions sampled out by the FNV hash are counted apart; three queued, the rest dropped (full).
    const sessions = Array.from({ length: 12 }, (_, i) => `s${i}`);
    const kept = sessions.filter((s) => sessionSampled(s, 0.5));
    for (const s of sessions) cellar.trace(call(s));
    await cellar.flush();
    const sampledOut = sessions.length - kept.length;
    const queueFull = Math.max(0, kept.length - 3);
    expect(ingest.requests).toHaveLength(2);
    const [first, retry] = ingest.requests.map((r) => r.ledger);
    expect(first).toMatchObject({ service_name: "bot", seq: 1 });
    // A retry sends the same body, its report included: the host adds nothing for it.
    expect(retry).toEqual(first);
    expect(first.counts).toEqual({
      requested: sessions.length,
      queue_full: queueFull,
      retries_exhausted: 0,
      refused: 0,
      sampled_out: sampledOut,
    });
    // refuse-odd refused one of three: the next report says so.
    expect(cellar.ledger).toMatchObject({ refused: 1, requested: sessions.length });
    expect(JSON.stringify(first).length).toBeLessThan(250);
  });
});
