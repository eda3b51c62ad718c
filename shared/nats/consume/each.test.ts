import { afterEach, expect, test } from "bun:test";
import { PermanentMessageError } from "../failure.ts";
import { eachRunner, runOne } from "./each.ts";
import {
  deliveries,
  fakeMsg,
  itemSpec,
  runtimesClosedAfterEach,
  transientError,
  type Item,
} from "../../../test/helpers/consume-fakes.ts";
import type { StreamSpec } from "../catalogue.ts";

const runtime = runtimesClosedAfterEach(afterEach);

test("one message: a transient failure retries it in place, a permanent one dead-letters it, success acks", async () => {
  const rt = runtime();
  const [a, b] = deliveries([fakeMsg(1), fakeMsg(2)]);
  let tries = 0;
  await runOne(rt, a, async () => {
    if (++tries < 3) throw transientError();
  });
  await runOne(rt, b, async () => {
    throw new PermanentMessageError("never");
  });
  expect(tries).toBe(3);
  expect((a.msg as unknown as { settled: string[] }).settled).toEqual(["ack"]);
  expect(rt.deadLetters).toEqual([{ seq: 2, reason: "never" }]);
});

test("stopping during a transient outage gives the message back instead of retrying", async () => {
  const rt = runtime();
  const [a] = deliveries([fakeMsg(1)]);
  await runOne(rt, a, async () => {
    rt.stop();
    throw transientError();
  });
  expect((a.msg as unknown as { settled: string[] }).settled).toEqual(["nak:-"]);
});

const lanedSpec: StreamSpec<Item> = {
  ...itemSpec,
  consumer: { ...itemSpec.consumer!, lanes: { count: 4, filter: () => "x" } },
};

test("on a laned stream one lane holds at most a quarter of the in-flight budget; the others still get slots", async () => {
  const rt = runtime(undefined, lanedSpec);
  const gates: Array<() => void> = [];
  const running = new Map<string, number>();
  const runner = eachRunner<Item>(rt, {
    each: { maxInFlight: 8 },
    handle: (d) =>
      new Promise((resolve) => {
        const lane = d.value.tenantId;
        running.set(lane, (running.get(lane) ?? 0) + 1);
        gates.push(() => {
          running.set(lane, (running.get(lane) ?? 1) - 1);
          resolve(undefined);
        });
      }),
  });
  expect(runner.maxMessages).toBe(2);
  const busy = runner.acceptFor("a");
  const quiet = runner.acceptFor("b");
  const msgs = Array.from({ length: 4 }, (_, i) => fakeMsg(i + 1));
  const asLaneA = (m: (typeof msgs)[number]) => ({ value: { i: m.seq, tenantId: "a" }, msg: m });
  // Like lane a's pull loop: each message waits for a slot before the next is taken.
  await busy(asLaneA(msgs[0]));
  await busy(asLaneA(msgs[1]));
  let thirdStarted = false;
  const third = busy(asLaneA(msgs[2])).then(() => (thirdStarted = true));
  const other = fakeMsg(9);
  await quiet({ value: { i: 9, tenantId: "b" }, msg: other });
  expect(running.get("a")).toBe(2); // ceil(8 * 0.25)
  expect(running.get("b")).toBe(1);
  expect(thirdStarted).toBe(false);
  gates.shift()!();
  await third;
  let fourthStarted = false;
  const fourth = busy(asLaneA(msgs[3])).then(() => (fourthStarted = true));
  while (gates.length || !fourthStarted) {
    gates.shift()?.();
    await new Promise((r) => setTimeout(r, 1));
  }
  await fourth;
  while (gates.length) gates.shift()!();
  await runner.drain();
  expect([...msgs, other].map((m) => m.settled)).toEqual([...msgs, other].map(() => ["ack"]));
});
