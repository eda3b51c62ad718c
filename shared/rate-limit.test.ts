import { expect, test } from "bun:test";
import type { HttpError } from "@cellar/shared/errors";
import { createRateLimiter, PROBE_WAIT_MS } from "@cellar/shared/rate-limit";

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

test("a reservation takes the door's estimate before the body is read; the real count settles it", () => {
  let t = 0;
  const rl = createRateLimiter({ perSecond: 10, burst: 100, now: () => t });
  // First request: nothing known, one token reserved; 40 items settle it at 40.
  const first = rl.reserve("k", "batch");
  expect(first.headers["ratelimit-remaining"]).toBe("99");
  expect(first.settle(40)["ratelimit-remaining"]).toBe("60");
  // Now 40 are reserved up front; a smaller request gets the rest back.
  const second = rl.reserve("k", "batch");
  expect(second.headers["ratelimit-remaining"]).toBe("20");
  expect(second.settle(5)["ratelimit-remaining"]).toBe("55");
  // Another door of the same credential has its own estimate, the same bucket.
  expect(rl.reserve("k", "otlp-traces").headers["ratelimit-remaining"]).toBe("54");
});

test("a bucket that cannot hold the estimate refuses at once (429, Retry-After until it can); a larger real count may owe up to a burst", () => {
  let t = 0;
  const rl = createRateLimiter({ perSecond: 10, burst: 100, now: () => t });
  rl.reserve("k", "batch").settle(90); // 10 left, estimate 90
  const early = refused(() => rl.reserve("k", "batch"))!;
  expect(early.status).toBe(429);
  expect(early.headers["retry-after"]).toBe("8"); // (90 - 10) / 10 per second
  t += 8_000; // 90 tokens
  // Two requests at once: the second cannot reserve the usual 90.
  const a = rl.reserve("k", "batch");
  expect(refused(() => rl.reserve("k", "batch"))?.status).toBe(429);
  // The real count is larger than the reservation: admitted, the bucket owes.
  expect(a.settle(100)["ratelimit-remaining"]).toBe("0");
  expect(refused(() => rl.reserve("k", "batch"))?.headers["retry-after"]).toBe("11"); // -10 -> 100
  // Racing requests admitted on a small estimate are refused once the debt would pass a burst.
  t += 60_000;
  const small = [rl.reserve("k", "raw"), rl.reserve("k", "raw"), rl.reserve("k", "raw")];
  expect(small[0].settle(100)["ratelimit-remaining"]).toBe("0");
  expect(small[1].settle(50)["ratelimit-remaining"]).toBe("0"); // owes 51
  const late = refused(() => small[2].settle(100))!;
  expect(late.status).toBe(429);
});

test("a request over the burst is 413 and charged; an uncounted body makes the next wait for a full bucket", () => {
  let t = 0;
  const rl = createRateLimiter({ perSecond: 10, burst: 100, now: () => t });
  const over = refused(() => rl.reserve("k", "batch").settle(150, "spans"))!;
  expect(over.status).toBe(413);
  expect(over.message).toContain("150 spans in one request exceed this credential's rate-limit burst of 100");
  expect(refused(() => rl.reserve("k", "batch"))?.status).toBe(429); // it owes 50
  t += 60_000;
  rl.reserve("k", "raw").settleUncounted();
  expect(refused(() => rl.reserve("k", "raw"))?.headers["retry-after"]).toBe("1"); // 99 of 100
  // The estimate fades after ESTIMATE_WINDOW_MS.
  t += 20_000;
  const r = rl.reserve("k", "raw");
  expect(r.headers["ratelimit-remaining"]).toBe("99");
  r.settleUncounted();
  r.settleUncounted(); // idempotent
});

/** The 429 (or other error) a promise rejects with; null when it resolves. */
async function rejected(p: Promise<unknown>): Promise<HttpError | null> {
  try {
    await p;
    return null;
  } catch (err) {
    return err as HttpError;
  }
}

test("a herd admitted on a small estimate parses one body: the others are refused at confirm once it is counted", async () => {
  let t = 0;
  const rl = createRateLimiter({ perSecond: 500, burst: 1000, now: () => t });
  // 32 concurrent first requests: the estimate is 1, so each is admitted before its body is read.
  const herd = Array.from({ length: 32 }, () => rl.reserve("f", "batch"));
  await herd[0].confirm(); // nothing counted yet: the door's probe
  // The others wait at confirm for the probe to be counted, then are refused (not inflated or parsed).
  const waiting = herd.slice(1).map((r) => rejected(r.confirm()));
  herd[0].settle(1000);
  const refusals = await Promise.all(waiting);
  expect(refusals.every((e) => e?.status === 429)).toBe(true);
  expect(Number(refusals[0]!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  // Refused at confirm: settled, so the door's settleUncounted is a no-op (the estimate stays 1,000).
  for (const r of herd.slice(1)) r.settleUncounted();
  t += 3_000; // the bucket full again: a request of the learned size is admitted and confirmed
  const next = rl.reserve("f", "batch");
  expect(next.headers["ratelimit-remaining"]).toBe("0");
  await next.confirm();
  next.settle(1000);
  // A steady client's concurrent requests of one size confirm without a change.
  const pair = [rl.reserve("v", "batch"), rl.reserve("v", "batch")];
  await pair[0].confirm(); // the probe
  pair[0].settle(10);
  const a = rl.reserve("v", "batch");
  await pair[1].confirm(); // grew from 1 to 10: 9 more taken, the bucket holds them
  pair[1].settle(10);
  await a.confirm();
  expect(a.settle(10)["ratelimit-remaining"]).toBe(String(1000 - 3 * 10)); // three requests of 10
});

test("a probe that ends uncounted lets the waiters go on; so does one never settled, after PROBE_WAIT_MS", async () => {
  let t = 0;
  const rl = createRateLimiter({ perSecond: 500, burst: 1000, now: () => t });
  const [probe, waiter] = [rl.reserve("k", "otlp"), rl.reserve("k", "otlp")];
  await probe.confirm();
  const waited = waiter.confirm();
  probe.settleUncounted(); // unreadable: the estimate becomes the burst
  expect((await rejected(waited))?.status).toBe(429); // 998 tokens cannot hold 999 more
  // A probe whose request never settles is taken as gone once it is PROBE_WAIT_MS old.
  t += 60_000;
  const stuck = rl.reserve("s", "otlp");
  await stuck.confirm();
  t += PROBE_WAIT_MS;
  const late = rl.reserve("s", "otlp");
  expect(await rejected(late.confirm())).toBeNull(); // did not wait: became the probe itself
});
