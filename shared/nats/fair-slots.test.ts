import { expect, test } from "bun:test";
import { createFairSlots } from "./fair-slots.ts";
import { fnv1a, LANE_COUNT, laneOf, laneToken } from "./lanes.ts";

test("a lane alone holds at most its cap; the rest stays free for other lanes", async () => {
  const slots = createFairSlots(8, 2);
  const a = [await slots.acquire("a"), await slots.acquire("a")];
  let third = false;
  void slots.acquire("a").then(() => (third = true));
  const b = await slots.acquire("b"); // not behind a's waiter
  await Bun.sleep(0);
  expect([slots.held("a"), slots.held("b"), third]).toEqual([2, 1, false]);
  b();
  await Bun.sleep(0);
  expect(third).toBe(false); // b's slot does not go to a: a is at its cap
  a[0]();
  await Bun.sleep(0);
  expect([third, slots.held("a")]).toEqual([true, 2]);
});

test("with the budget full, freed slots go round-robin to the lanes that waited longest", async () => {
  const slots = createFairSlots(2, 2);
  const held = [await slots.acquire("flood"), await slots.acquire("flood")];
  const order: string[] = [];
  const wait = (lane: string) => slots.acquire(lane).then((release) => (order.push(lane), release));
  const waiters = [wait("b"), wait("flood"), wait("c")];
  held[0]();
  held[1]();
  const [rb] = await Promise.all([waiters[0], waiters[1]]);
  expect(order).toEqual(["b", "flood"]);
  rb();
  await waiters[2];
  expect(order).toEqual(["b", "flood", "c"]);
});

test("lanes: a stable FNV-1a hash of the tenant id, 16 lanes, tokens 00..15", () => {
  // FNV-1a test vectors.
  expect(fnv1a("")).toBe(0x811c9dc5);
  expect(fnv1a("a")).toBe(0xe40c292c);
  expect(fnv1a("foobar")).toBe(0xbf9cf968);
  const id = "3f6c1c1e-2b1a-4c8e-9a57-0d6f1e2a9b10";
  expect(laneOf(id)).toBe(fnv1a(id) % LANE_COUNT);
  expect(laneToken(laneOf(id))).toMatch(/^(0\d|1[0-5])$/);
  const used = new Set(Array.from({ length: 1000 }, (_, i) => laneOf(`tenant-${i}`)));
  expect(used.size).toBe(LANE_COUNT);
  expect([laneToken(0), laneToken(15)]).toEqual(["00", "15"]);
});
