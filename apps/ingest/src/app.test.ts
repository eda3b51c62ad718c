import { expect, test } from "bun:test";
import { getHealth, getOpenApi } from "./app.ts";

test("getHealth answers ok", () => {
  expect(getHealth()).toEqual({ status: "ok" });
});

test("getOpenApi documents every door, the batch door included", async () => {
  const doc = (await getOpenApi()) as { paths: Record<string, unknown> };
  expect(Object.keys(doc.paths)).toEqual(
    expect.arrayContaining(["/raw/traces", "/raw/events", "/raw/batch", "/v1/traces", "/v1/logs"]),
  );
});

test("through the app, a credential back before its Retry-After gets its next 429 when that ends", async () => {
  const { createIngestApp } = await import("./app.ts");
  const { createRefusalPacing } = await import("./pacing.ts");
  const { createLogger } = await import("@cellar/shared/logger");
  const { fakePipeline, jsonRequest } = await import("../test/fake-pipeline.ts");
  const fake = fakePipeline({ rateLimit: { perSecond: 1, burst: 1 }, now: () => Date.now() });
  const pacing = createRefusalPacing({ maxHoldMs: 400 });
  const app = createIngestApp(
    { logger: createLogger("silent"), maxBodyBytes: 64 * 1024, pacing } as unknown as Parameters<
      typeof createIngestApp
    >[0],
    fake.pipeline,
  );
  const send = async () => {
    const t0 = performance.now();
    // A declared length, as a client over HTTP sends it (a body of unknown length is never held).
    const body = JSON.stringify({ service_name: "s", session_id: "x" });
    const res = await app.handle(jsonRequest("/raw/traces", body, { "content-length": String(body.length) }));
    return { status: res.status, ms: performance.now() - t0, retryAfter: res.headers.get("retry-after") };
  };
  // The one token goes to the first request (its body is refused 400, but it was counted).
  expect((await send()).status).toBe(400);
  const first = await send(); // refused for the first time: at once
  expect(first.status).toBe(429);
  expect(first.retryAfter).toBe("1");
  expect(first.ms).toBeLessThan(200);
  const again = await send(); // back at once, ignoring Retry-After: held until it ends (at most 400 ms)
  expect(again.status).toBe(429);
  expect(again.ms).toBeGreaterThanOrEqual(350);
  expect(pacing.held()).toBe(0);
});
