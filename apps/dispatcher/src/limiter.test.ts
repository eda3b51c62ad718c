import { expect, test } from "bun:test";
import { createKeyedLimiter } from "./limiter.ts";

test("a backlog of thousands of waiters is served first in, first out, never above the cap", async () => {
  const cap = 3;
  const limiter = createKeyedLimiter(cap);
  const held = await Promise.all(Array.from({ length: cap }, () => limiter.acquire("k")));
  const order: number[] = [];
  let running = cap;
  let peak = cap;
  const waiters = Array.from({ length: 5000 }, (_, i) =>
    limiter.acquire("k").then(async (release) => {
      order.push(i);
      peak = Math.max(peak, ++running);
      await Promise.resolve();
      running--;
      release();
    }),
  );
  expect(limiter.queued("k")).toBe(5000);
  for (const release of held) {
    running--;
    release();
  }
  await Promise.all(waiters);
  expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  expect(peak).toBeLessThanOrEqual(cap);
  expect(limiter.queued("k")).toBe(0);
  // Drained: the next caller gets a slot at once, and releasing twice frees one slot only.
  const again = await limiter.acquire("k");
  again();
  again();
  const all = await Promise.all(Array.from({ length: cap }, () => limiter.acquire("k")));
  let extra = false;
  const more = limiter.acquire("k").then((r) => ((extra = true), r));
  await Promise.resolve();
  expect(extra).toBe(false);
  all[0]();
  (await more)();
  for (const r of all.slice(1)) r();
});
