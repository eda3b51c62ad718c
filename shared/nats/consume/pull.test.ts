import { afterAll, beforeAll, expect, test } from "bun:test";
import { isNotFound, pullLoop } from "./pull.ts";
import { settle } from "./settle.ts";
import { openTestNats, until, type Item } from "../../../test/helpers/consume-fakes.ts";
import type { DeadLetterInfo, Delivery } from "./types.ts";

let t: Awaited<ReturnType<typeof openTestNats>>;
beforeAll(async () => {
  t = await openTestNats("pull");
});
afterAll(() => t.close());

test("a pull hands each decoded message to accept, dead-letters an invalid one without accepting it, and ends on stop", async () => {
  const { spec, subject } = await t.stream();
  const dead: DeadLetterInfo[] = [];
  const rt = t.runtime(spec, { onDeadLetter: (d) => dead.push(d) });
  const seen: number[] = [];
  const loop = pullLoop<Item>(
    rt,
    "worker",
    async (d: Delivery<Item>) => {
      expect(rt.held.has(d.msg)).toBe(true); // in hand: the heartbeat keeps it alive
      seen.push(d.value.i);
      await settle(rt, d, "ack");
    },
    { maxMessages: 10 },
  );
  await t.publish(subject, { i: 1, tenantId: "a" });
  await t.publish(subject, "{ not json");
  await t.publish(subject, { i: 2, tenantId: "a" });
  await until(() => seen.length === 2 && dead.length === 1, "2 accepted, 1 dead letter");
  expect(seen).toEqual([1, 2]);
  expect(dead[0].reason).toStartWith("invalid message:");
  expect(rt.pulls.has(loop)).toBe(true);
  rt.stop();
  await loop.done;
  expect(rt.pulls.has(loop)).toBe(false);
  expect(rt.held.size).toBe(0);
});

test("a pull `untilGone` ends by itself once its consumer does not exist", async () => {
  const { spec } = await t.stream();
  const rt = t.runtime(spec);
  const loop = pullLoop<Item>(rt, "never-created", async () => {}, { maxMessages: 1, untilGone: true });
  await loop.done;
  expect(rt.isStopping()).toBe(false);
  const err = await t.nats.jsm.consumers.info(spec.name(t.topology), "never-created").catch((e) => e);
  expect(isNotFound(err)).toBe(true);
  expect(isNotFound(new Error("consumer not found"))).toBe(false);
});
