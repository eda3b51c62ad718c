import { afterEach, expect, test } from "bun:test";
import { PermanentMessageError } from "../failure.ts";
import { settle, failed, giveBack, waitTransient } from "./settle.ts";
import { deliveries, fakeMsg, runtimesClosedAfterEach, transientError } from "../../../test/helpers/consume-fakes.ts";

const runtime = runtimesClosedAfterEach(afterEach);

test("each outcome settles its message once: ack, nak after retryInMs (rounded, never negative), term", async () => {
  const rt = runtime();
  const [a, b, c, d, e] = [1, 2, 3, 4, 5].map((i) => fakeMsg(i));
  const ds = deliveries([a, b, c, d, e]);
  for (const x of ds) rt.held.set(x.msg, Date.now());
  await settle(rt, ds[0], undefined);
  await settle(rt, ds[1], "ack");
  await settle(rt, ds[2], { retryInMs: 1234.6 });
  await settle(rt, ds[3], { retryInMs: -5 });
  await settle(rt, ds[4], { term: "row deleted" });
  expect([a, b, c, d, e].map((m) => m.settled)).toEqual([
    ["ack"],
    ["ack"],
    ["nak:1235"],
    ["nak:0"],
    ["term:row deleted"],
  ]);
  expect(rt.held.size).toBe(0);
});

test("a reported failure is judged like a thrown one: permanent dead-letters, transient comes back after the longest transient delay", async () => {
  const rt = runtime({ transientBackoffMs: { first: 1, max: 40 } });
  const [p, t] = deliveries([fakeMsg(1), fakeMsg(2)]);
  await settle(rt, p, { fail: new PermanentMessageError("bad row") });
  await settle(rt, t, { fail: transientError() });
  expect(rt.deadLetters.map((d) => d.seq)).toEqual([1]);
  expect(rt.deadLetters[0].reason).toContain("bad row");
  expect((t.msg as unknown as { settled: string[] }).settled).toEqual(["nak:40"]);
});

test("a retry failure naks with the backoff of its delivery and dead-letters on delivery maxDeliver", async () => {
  const rt = runtime({ maxDeliver: 3, backoffMs: [10, 20] });
  const ms = [fakeMsg(1, 1), fakeMsg(2, 2), fakeMsg(3, 3)];
  for (const d of deliveries(ms)) await failed(rt, d, new Error("boom"), "retry");
  expect(ms.map((m) => m.settled)).toEqual([["nak:10"], ["nak:20"], ["ack"]]);
  expect(rt.deadLetters).toEqual([{ seq: 3, reason: "failed on delivery 3 of 3: boom" }]);
});

test("giving back naks at once without a delay; waiting out a transient failure says false once stopping", async () => {
  const rt = runtime();
  const ms = [fakeMsg(1), fakeMsg(2)];
  giveBack(rt, deliveries(ms));
  expect(ms.map((m) => m.settled)).toEqual([["nak:-"], ["nak:-"]]);
  expect(await waitTransient(rt, 0, 2, new Error("away"))).toBe(true);
  rt.stop();
  expect(await waitTransient(rt, 1, 2, new Error("away"))).toBe(false);
});
