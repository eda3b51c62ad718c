import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { createIngestFixture, type IngestFixture } from "../apps/ingest/test/fixture";
import { chatTrace } from "./helpers/payloads";

let fx: IngestFixture;
let clock = Date.parse("2025-03-01T00:00:00Z");
beforeAll(async () => {
  fx = await createIngestFixture({
    rateLimit: { perSecond: 2, burst: 3 },
    now: () => new Date(clock),
    maxBodyBytes: 32 * 1024,
  });
});
afterAll(() => fx.stop());

const trace = () =>
  chatTrace({
    sessionId: `s-${crypto.randomUUID().slice(0, 8)}`,
    messages: [{ role: "user", content: "hi" }],
    reply: "hello",
  });

test("over the burst a credential gets 429 with Retry-After and RateLimit headers, and nothing is stored", async () => {
  const other = await fx.key("telemetry");
  for (let i = 0; i < 3; i++) {
    const ok = await fx.post(
      i % 2 ? "/raw/events" : "/raw/traces",
      i % 2 ? { name: "e", service_name: "s", session_id: `x${i}`, timestamp: "2025-01-01T00:00:00Z" } : trace(),
    );
    expect(ok.status).toBe(200);
    expect(ok.headers.get("ratelimit-limit")).toBe("3");
    expect(ok.headers.get("ratelimit-remaining")).toBe(String(2 - i));
  }
  const before = await fx.stored();
  const limited = await fx.post("/raw/traces", trace());
  expect(limited.status).toBe(429);
  expect((await limited.json()).error).toContain("rate limit");
  expect(limited.headers.get("retry-after")).toBe("1");
  expect(limited.headers.get("ratelimit-remaining")).toBe("0");
  expect(limited.headers.get("ratelimit-reset")).toBeTruthy();
  expect(limited.headers.get("x-request-id")).toBeTruthy();
  expect(await fx.stored()).toBe(before);

  // Another credential of the same tenant has its own bucket.
  expect((await fx.post("/raw/traces", trace(), { authorization: `Bearer ${other.key}` })).status).toBe(200);

  clock += 500;
  expect((await fx.post("/raw/traces", trace())).status).toBe(200);
  expect((await fx.post("/raw/traces", trace())).status).toBe(429);
});

test("on a real socket a declared Content-Length over the limit gets a JSON 413 without the body being read", async () => {
  const server = fx
    .build({ maxBodyBytes: 32 * 1024, rateLimit: { perSecond: 0, burst: 1 } })
    .listen({ port: 0, hostname: "127.0.0.1", maxRequestBodySize: 1024 ** 3 });
  try {
    const port = server.server!.port!;
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(port, "127.0.0.1");
      let data = "";
      sock.on("data", (d) => {
        data += d.toString();
        if (data.includes("\r\n\r\n") && data.includes("}")) {
          sock.destroy();
          resolve(data);
        }
      });
      sock.on("error", reject);
      // Declares 100 MB, sends 1 KB: the answer must come without waiting for the rest.
      sock.write(
        `POST /raw/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fx.tenant.telemetryKey}\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n${"x".repeat(1024)}`,
      );
    });
    expect(reply.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
    expect(reply).toContain('{"error":"body exceeds the limit of 32768 bytes"}');
    expect(reply.toLowerCase()).toContain("x-request-id:");

    const exact = JSON.stringify({ ...trace(), pad: "" });
    const padded = JSON.stringify({ ...JSON.parse(exact), pad: "p".repeat(32 * 1024 - exact.length) });
    expect(new TextEncoder().encode(padded).length).toBe(32 * 1024);
    const atLimit = await fetch(`http://127.0.0.1:${port}/raw/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", ...fx.auth },
      body: padded,
    });
    // The limit is inclusive.
    expect(atLimit.status).toBe(200);
    const over = await fetch(`http://127.0.0.1:${port}/raw/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", ...fx.auth },
      body: padded + " ",
    });
    expect(over.status).toBe(413);
  } finally {
    await server.stop(true);
  }
});

test("publishes waiting on a PubAck beyond the in-flight cap are refused with 503 at once", async () => {
  // A JetStream that never acks: the first request waits, the second must not queue behind it.
  // The second is sent once the first is publishing (its key is read from Postgres first, which a
  // loaded machine can make slower than any fixed pause).
  let publishing!: () => void;
  const firstPublishing = new Promise<void>((r) => {
    publishing = r;
  });
  const stuck = {
    publish: () => {
      publishing();
      return new Promise(() => {});
    },
  } as never;
  const app = fx.build({
    js: stuck,
    maxInFlightPublishes: 1,
    publishTimeoutMs: 60_000,
    rateLimit: { perSecond: 0, burst: 1 },
  });
  void fx.post("/raw/traces", trace(), {}, app);
  await firstPublishing;
  const res = await fx.post("/raw/traces", trace(), {}, app);
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("5");
});
