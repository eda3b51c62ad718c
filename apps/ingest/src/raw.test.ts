import { describe, expect, test } from "bun:test";
import { chatTrace } from "../../../test/helpers/payloads.ts";
import { fakePipeline, jsonRequest } from "../test/fake-pipeline.ts";
import { postRaw } from "./raw.ts";

const trace = () => chatTrace({ sessionId: "s-1", messages: [{ role: "user", content: "Hi" }], reply: "Hello." });

describe("postRaw", () => {
  test("stores a valid trace and answers success", async () => {
    const fake = fakePipeline();
    const res = await postRaw(fake.pipeline, "trace", jsonRequest("/raw/traces", trace()), "req-9", undefined);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "success" });
    expect(res.headers.get("x-request-id")).toBe("req-9");
    expect(fake.stored.map((s) => [s.kind, s.serviceName])).toEqual([["trace", "support-bot"]]);
  });

  test("the message id hashes the body's parse: whitespace does not change it, content does", async () => {
    const fake = fakePipeline();
    const text = JSON.stringify(trace());
    for (const body of [text, JSON.stringify(JSON.parse(text), null, 2), text.replace('"Hi"', '"Ho"')])
      await postRaw(fake.pipeline, "trace", jsonRequest("/raw/traces", body), "r", undefined);
    const [a, b, c] = fake.stored.map((s) => s.messageId);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });

  test("errors keep the request id and rate-limit headers, in the contract's shape", async () => {
    const fake = fakePipeline({ rateLimit: { perSecond: 1, burst: 1 } });
    const bad = await postRaw(fake.pipeline, "event", jsonRequest("/raw/events", { name: "x" }), "r1", undefined);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringMatching(/^invalid (session_id|timestamp)/) });
    expect(bad.headers.get("ratelimit-limit")).toBe("1");
    const limited = await postRaw(fake.pipeline, "event", jsonRequest("/raw/events", {}), "r2", undefined);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("x-request-id")).toBe("r2");
  });

  test("a gzip body is accepted", async () => {
    const fake = fakePipeline();
    const gz = Bun.gzipSync(new TextEncoder().encode(JSON.stringify(trace())));
    const res = await postRaw(
      fake.pipeline,
      "trace",
      jsonRequest("/raw/traces", gz, { "content-encoding": "gzip" }),
      "r",
      undefined,
    );
    expect(res.status).toBe(200);
  });
});
