import { expect, test } from "bun:test";
import type { HttpError } from "@cellar/shared/errors";
import { createRateLimiter } from "@cellar/shared/rate-limit";

function refused(fn: () => unknown): HttpError | null {
  try {
    fn();
    return null;
  } catch (err) {
    return err as HttpError;
  }
}

test("a burst is allowed, then 429 with Retry-After until a token refills", () => {
  let t = 0;
  const rl = createRateLimiter({ perSecond: 2, burst: 3, now: () => t });
  expect(rl.take("k")).toMatchObject({ "ratelimit-limit": "3", "ratelimit-remaining": "2" });
  rl.take("k");
  expect(rl.take("k")["ratelimit-remaining"]).toBe("0");
  const err = refused(() => rl.take("k"))!;
  expect(err.status).toBe(429);
  expect(err.headers["retry-after"]).toBe("1");
  expect(err.headers["ratelimit-remaining"]).toBe("0");
  expect(err.headers["ratelimit-reset"]).toBe("2");
  t += 499;
  expect(refused(() => rl.take("k"))?.status).toBe(429);
  t += 1;
  expect(refused(() => rl.take("k"))).toBeNull();
});

test("credentials have separate buckets", () => {
  const rl = createRateLimiter({ perSecond: 1, burst: 1, now: () => 0 });
  rl.take("a");
  expect(refused(() => rl.take("a"))?.status).toBe(429);
  expect(refused(() => rl.take("b"))).toBeNull();
});

test("perSecond 0 disables limiting and sends no headers", () => {
  const rl = createRateLimiter({ perSecond: 0, burst: 1, now: () => 0 });
  for (let i = 0; i < 1000; i++) expect(rl.take("k")).toEqual({});
});

test("idle buckets are forgotten when too many credentials are tracked", () => {
  let t = 0;
  const rl = createRateLimiter({ perSecond: 1, burst: 1, now: () => t, maxTracked: 2 });
  rl.take("a");
  rl.take("b");
  t += 10_000;
  rl.take("c");
  // "a" was full again and dropped: a fresh bucket, not an error.
  expect(refused(() => rl.take("a"))).toBeNull();
});
