import { expect, test } from "bun:test";
import { CROWDED_HARD_FACTOR, CROWDED_WAIT_MS, createFairness, crowdedDelayMs } from "./fairness.ts";

const tick = () => new Promise((r) => setTimeout(r, 0));

test("a tenant holding its whole share leaves the other slots to other tenants", async () => {
  const f = createFairness({ concurrency: 8, hostCap: 100, tenantCap: 2 });
  const held = [
    await f.acquire({ tenantId: "A", url: "https://dead-1.example/x" }),
    await f.acquire({ tenantId: "A", url: "https://dead-2.example/x" }),
  ];
  let thirdA = false;
  void f.acquire({ tenantId: "A", url: "https://dead-3.example/x" }).then(() => (thirdA = true));
  await tick();
  expect(thirdA).toBe(false); // A waits for its own slots...
  const b = await Promise.race([
    f.acquire({ tenantId: "B", url: "https://live.example/x" }),
    Bun.sleep(50).then(() => null),
  ]);
  expect(b).not.toBeNull(); // ...while B gets one at once
  held[0]();
  await tick();
  expect(thirdA).toBe(true);
});

test("the destination cap is per host: subscriptions and tenants aimed at one host share it", async () => {
  const f = createFairness({ concurrency: 100, hostCap: 2, tenantCap: 100 });
  await f.acquire({ tenantId: "A", url: "https://hooks.example.com/a" });
  await f.acquire({ tenantId: "B", url: "https://HOOKS.example.com/b" });
  const third = await Promise.race([
    f.acquire({ tenantId: "C", url: "https://hooks.example.com/c" }),
    Bun.sleep(50).then(() => null),
  ]);
  expect(third).toBeNull();
  const otherHost = await Promise.race([
    f.acquire({ tenantId: "A", url: "https://other.example.com/a" }),
    Bun.sleep(50).then(() => null),
  ]);
  expect(otherHost).not.toBeNull();
});

test("crowded once a tenant's queue passes twice its share", async () => {
  const f = createFairness({ concurrency: 100, hostCap: 100, tenantCap: 1 });
  const k = { tenantId: "A", url: "https://h.example/" };
  await f.acquire(k);
  void f.acquire(k);
  await tick();
  expect(f.crowded(k)).toBe(false);
  void f.acquire(k);
  await tick();
  expect(f.crowded(k)).toBe(true);
  expect(f.crowded({ tenantId: "B", url: "https://h.example/" })).toBe(false);
});

test("a crowded job backs off: ~1 s on its first delivery, doubling up to ~32 s", () => {
  const mid = () => 0.5;
  expect([1, 2, 3, 4, 5, 6, 7, 50].map((n) => crowdedDelayMs(n, mid))).toEqual([
    1000, 2000, 4000, 8000, 16000, 32000, 32000, 32000,
  ]);
  expect(crowdedDelayMs(1, () => 0)).toBe(500);
  expect(crowdedDelayMs(9, () => 0.999)).toBeLessThan(48_000);
});

test("a long queue to a host that answers fast stays in line; once its slots hang, it is crowded", async () => {
  let clock = 0;
  const f = createFairness({ concurrency: 1000, hostCap: 2, tenantCap: 1000, now: () => clock });
  const k = { tenantId: "A", url: "https://busy.example/" };
  // History: slots held 10 ms each.
  for (let i = 0; i < 4; i++) {
    const release = await f.acquire(k);
    clock += 10;
    release();
  }
  const held = [await f.acquire(k), await f.acquire(k)];
  for (let i = 0; i < 2 * 4 + 3; i++) void f.acquire(k);
  await tick();
  // 11 queued, past the soft bound of 4 x 2, but (11 + 1) x 10 ms / 2 slots is far under a second.
  expect(f.crowded(k)).toBe(false);
  // Nothing comes back for longer than the wait bound: the host is hung, not busy.
  clock += CROWDED_WAIT_MS + 1;
  expect(f.crowded(k)).toBe(true);
  held[0]();
  await tick();
  // A slot came back, but after a hold of over a second: the average says a long wait.
  clock += 1;
  expect(f.crowded(k)).toBe(true);
});

test("a fast queue is crowded anyway past the hard bound", async () => {
  const clock = 0;
  const f = createFairness({ concurrency: 1000, hostCap: 1, tenantCap: 1000, now: () => clock });
  const k = { tenantId: "A", url: "https://busy.example/" };
  (await f.acquire(k))();
  await f.acquire(k);
  for (let i = 0; i < 4 * CROWDED_HARD_FACTOR - 1; i++) void f.acquire(k);
  await tick();
  expect(f.crowded(k)).toBe(false);
  void f.acquire(k);
  await tick();
  expect(f.crowded(k)).toBe(true);
});
