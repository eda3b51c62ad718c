import { afterEach, expect, test } from "bun:test";
import { PermanentMessageError } from "../failure.ts";
import { laneBatchRunner } from "./lane-batch.ts";
import { deliveries, fakeMsg, runtimesClosedAfterEach, type Item } from "../../../test/helpers/consume-fakes.ts";
import type { Delivery } from "./types.ts";

const runtime = runtimesClosedAfterEach(afterEach);

test("lane batches: each batch holds one lane; a lane with a backlog holds at most perLane batches, and a quiet lane's batch starts at once", async () => {
  const rt = runtime();
  const batches: Array<{ lane: string; items: number[] }> = [];
  const releases: Array<() => void> = [];
  const runner = laneBatchRunner<Item>(rt, {
    batch: { maxBatch: 4, maxWaitMs: 10_000, concurrency: 3, perLane: 2 },
    handle: async (items) => {
      batches.push({ lane: items[0].value.i >= 100 ? "07" : "03", items: items.map((d) => d.value.i) });
      await new Promise<void>((r) => releases.push(r));
    },
  });
  const flood = runner.acceptFor("03");
  const quiet = runner.acceptFor("07");
  const floodMsgs = deliveries(Array.from({ length: 16 }, (_, i) => fakeMsg(i + 1))) as Delivery<Item>[];
  // The flood's lane: two full batches run; a third waits (its cap), and its pull then waits too.
  for (const d of floodMsgs.slice(0, 8)) await flood(d);
  let floodWaits = true;
  const floodRest = (async () => {
    for (const d of floodMsgs.slice(8, 12)) await flood(d);
    floodWaits = false;
  })();
  await Bun.sleep(1);
  expect(batches.map((b) => b.items)).toEqual([
    [1, 2, 3, 4],
    [5, 6, 7, 8],
  ]);
  expect(floodWaits).toBe(true);
  // A quiet lane's partial batch goes after its own maxWaitMs... here a full one, at once, in the slot
  // the flood's cap leaves free.
  for (const d of deliveries(Array.from({ length: 4 }, (_, i) => fakeMsg(100 + i))) as Delivery<Item>[]) await quiet(d);
  expect(batches.map((b) => b.items)).toContainEqual([100, 101, 102, 103]);
  expect(batches.every((b) => b.items.every((i) => (b.lane === "07" ? i >= 100 : i < 100)))).toBe(true);
  // The flood's next batch waits for one of its own, not for the quiet lane's.
  expect(batches).toHaveLength(3);
  releases[2](); // the quiet lane's batch ends: the flood stays at its cap
  await Bun.sleep(1);
  expect(batches).toHaveLength(3);
  releases[0](); // one of the flood's ends: its next batch starts
  await floodRest;
  await Bun.sleep(1);
  expect(batches[3].items).toEqual([9, 10, 11, 12]);
  for (const d of floodMsgs.slice(12)) void flood(d);
  const drained = runner.drain();
  for (let i = 0; i < 10; i++) {
    for (const r of releases) r();
    await Bun.sleep(1);
  }
  await drained;
  expect(batches.filter((b) => b.lane === "03").flatMap((b) => b.items)).toEqual(floodMsgs.map((d) => d.value.i)); // in arrival order within the lane
  expect(floodMsgs.every((d) => (d.msg as unknown as { settled: string[] }).settled.join() === "ack")).toBe(true);
});

test("lane batches: a partial batch goes after maxWaitMs, and a failing message is isolated as in any batch", async () => {
  const rt = runtime();
  const calls: number[][] = [];
  const runner = laneBatchRunner<Item>(rt, {
    batch: { maxBatch: 10, maxWaitMs: 20, concurrency: 2, perLane: 1 },
    handle: async (items) => {
      calls.push(items.map((d) => d.value.i));
      if (items.some((d) => d.value.i === 2)) throw new PermanentMessageError("bad 2");
    },
  });
  const msgs = [fakeMsg(1), fakeMsg(2), fakeMsg(3)];
  const accept = runner.acceptFor("05");
  for (const d of deliveries(msgs) as Delivery<Item>[]) await accept(d);
  expect(calls).toEqual([]);
  await Bun.sleep(60);
  expect(calls[0]).toEqual([1, 2, 3]);
  await runner.drain();
  expect(msgs.map((m) => m.settled)).toEqual([["ack"], ["ack"], ["ack"]]); // the culprit acked once dead-lettered
  expect(rt.deadLetters).toEqual([{ seq: 2, reason: "bad 2" }]);
});
