import { expect, test } from "bun:test";
import { createKeyedLimiter } from "./limiter.ts";
import { MAX_ATTEMPTS, parseRetryAfter, retryDelayForAttempt, RETRY_STEPS_MS } from "./retry.ts";

test("the curve is 5s, 5m, 30m, 2h, 5h, 10h, 14h, 20h before attempts 2..9 (roughly 52 hours)", () => {
  expect(RETRY_STEPS_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000]);
  expect(MAX_ATTEMPTS).toBe(9);
  const mid = () => 0.5;
  expect([2, 3, 4, 5, 6, 7, 8, 9].map((n) => retryDelayForAttempt(n, 1, mid))).toEqual([...RETRY_STEPS_MS]);
  expect(RETRY_STEPS_MS.reduce((a, b) => a + b, 0) / 3600_000).toBeCloseTo(51.58, 1);
});

test("jitter stays within +/-10% and the time scale multiplies the step", () => {
  expect(retryDelayForAttempt(2, 1, () => 0)).toBe(4500);
  expect(retryDelayForAttempt(2, 1, () => 0.999999)).toBe(5500);
  expect(retryDelayForAttempt(9, 0.001, () => 0.5)).toBe(72_000);
  for (let i = 0; i < 1000; i++) {
    const d = retryDelayForAttempt(3, 1);
    expect(d).toBeGreaterThanOrEqual(270_000);
    expect(d).toBeLessThanOrEqual(330_000);
  }
});

test("Retry-After accepts seconds and HTTP dates, and ignores junk", () => {
  const now = new Date("2026-01-01T00:00:00Z");
  expect(parseRetryAfter("120", now)).toBe(120_000);
  expect(parseRetryAfter(new Date(now.getTime() + 90_000).toUTCString(), now)).toBe(90_000);
  expect(parseRetryAfter("soon", now)).toBeNull();
  expect(parseRetryAfter(null, now)).toBeNull();
  expect(parseRetryAfter("999999999", now)).toBe(24 * 3600_000);
});

test("the endpoint limiter caps concurrency per key and hands slots over in order", async () => {
  const limiter = createKeyedLimiter(2);
  const a1 = await limiter.acquire("a");
  const a2 = await limiter.acquire("a");
  const b1 = await limiter.acquire("b"); // other endpoints are not blocked
  let third = false;
  const a3p = limiter.acquire("a").then((r) => ((third = true), r));
  await Bun.sleep(5);
  expect(third).toBe(false);
  expect(limiter.queued("a")).toBe(1);
  a1();
  const a3 = await a3p;
  expect(third).toBe(true);
  a2();
  a3();
  b1();
  const again = await Promise.all([limiter.acquire("a"), limiter.acquire("a")]);
  again.forEach((r) => r());
});
