import { afterEach, expect, test } from "bun:test";
import { PermanentMessageError } from "../failure.ts";
import { batchRunner, runBatch } from "./batch.ts";
import {
  deliveries,
  fakeMsg,
  runtimesClosedAfterEach,
  transientError,
  type Item,
} from "../../../test/helpers/consume-fakes.ts";
import type { Delivery } from "./types.ts";

const runtime = runtimesClosedAfterEach(afterEach);

test("a batch failing on one message is split until that message is alone: the others are acked, it alone dead-lettered", async () => {
  const rt = runtime();
  const msgs = Array.from({ length: 9 }, (_, i) => fakeMsg(i + 1));
  const calls: number[][] = [];
  await runBatch(rt, deliveries(msgs), async (items) => {
    calls.push(items.map((d) => d.value.i));
    if (items.some((d) => d.value.i === 6)) throw new PermanentMessageError("row 6 refused");
  });
  expect(msgs.map((m) => m.settled)).toEqual(msgs.map(() => ["ack"]));
  expect(rt.deadLetters).toEqual([{ seq: 6, reason: "row 6 refused" }]);
  // Halving: every call after the first holds at most half of the batch that failed before it.
  expect(calls[0]).toHaveLength(9);
  expect(calls).toContainEqual([6]);
});

test("a transient failure keeps the whole batch and retries it; nothing is settled until it passes", async () => {
  const rt = runtime();
  const msgs = [fakeMsg(1), fakeMsg(2), fakeMsg(3)];
  let calls = 0;
  await runBatch(rt, deliveries(msgs), async (items) => {
    calls++;
    if (calls < 3) throw transientError();
    expect(items).toHaveLength(3);
    expect(msgs.every((m) => m.settled.length === 0)).toBe(true);
  });
  expect(calls).toBe(3);
  expect(msgs.map((m) => m.settled)).toEqual([["ack"], ["ack"], ["ack"]]);
});

test("per-message outcomes of a batch handler settle each message by its own", async () => {
  const rt = runtime();
  const msgs = [fakeMsg(1), fakeMsg(2), fakeMsg(3)];
  await runBatch(rt, deliveries(msgs), async () => ["ack", { retryInMs: 5 }, { term: "gone" }]);
  expect(msgs.map((m) => m.settled)).toEqual([["ack"], ["nak:5"], ["term:gone"]]);
});

test("the batch runner hands full batches at once and a partial one after maxWaitMs, never more than concurrency at once", async () => {
  const rt = runtime();
  let running = 0;
  let most = 0;
  const batches: number[][] = [];
  const runner = batchRunner<Item>(rt, {
    batch: { maxBatch: 3, maxWaitMs: 20, concurrency: 2 },
    handle: async (items) => {
      running++;
      most = Math.max(most, running);
      batches.push(items.map((d) => d.value.i));
      await new Promise((r) => setTimeout(r, 5));
      running--;
    },
  });
  const accept = runner.acceptFor("*");
  const msgs = Array.from({ length: 10 }, (_, i) => fakeMsg(i + 1));
  for (const d of deliveries(msgs) as Delivery<Item>[]) await accept(d);
  await runner.drain();
  expect(batches.flat().sort((a, b) => a - b)).toEqual(msgs.map((m) => m.seq));
  expect(batches.slice(0, 3)).toEqual([
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
  ]);
  expect(most).toBeLessThanOrEqual(2);
  expect(runner.maxMessages).toBe(100);
  expect(msgs.every((m) => m.settled.join() === "ack")).toBe(true);
});

test("batches take the busy lanes in turn: a quiet lane's message rides the next batch, not behind another lane's backlog", async () => {
  const rt = runtime();
  const batches: number[][] = [];
  let release: () => void = () => {};
  const runner = batchRunner<Item>(rt, {
    batch: { maxBatch: 4, maxWaitMs: 10_000, concurrency: 1 },
    handle: async (items) => {
      batches.push(items.map((d) => d.value.i));
      await new Promise<void>((r) => (release = r));
    },
  });
  const flood = runner.acceptFor("03");
  const quiet = runner.acceptFor("07");
  const floodMsgs = deliveries(Array.from({ length: 12 }, (_, i) => fakeMsg(i + 1))) as Delivery<Item>[];
  // The flooding lane's pull: its first batch runs, then it holds one batch's worth and waits.
  for (const d of floodMsgs.slice(0, 4)) await flood(d);
  let floodWaits = true;
  const floodRest = (async () => {
    for (const d of floodMsgs.slice(4, 8)) await flood(d);
    floodWaits = false;
  })();
  await Bun.sleep(1);
  expect(floodWaits).toBe(true); // its queue is full: the server keeps the rest of its backlog
  await quiet(deliveries([fakeMsg(100)])[0] as Delivery<Item>);
  expect(batches).toEqual([[1, 2, 3, 4]]);
  release();
  await floodRest;
  await Bun.sleep(1);
  // The next batch takes the lanes in turn: the quiet lane's message is in it.
  expect(batches[1]).toContain(100);
  expect(batches[1]).toHaveLength(4);
  for (const d of floodMsgs.slice(8)) void flood(d);
  const drained = runner.drain();
  for (let i = 0; i < 10; i++) {
    release();
    await Bun.sleep(1);
  }
  await drained;
  expect(batches.flat().sort((a, b) => a - b)).toEqual([...floodMsgs.map((d) => d.value.i), 100]);
  // Within a lane, arrival order is kept.
  const floodOrder = batches.flat().filter((i) => i !== 100);
  expect(floodOrder).toEqual(floodMsgs.map((d) => d.value.i));
});
