import { afterAll, beforeAll, expect, test } from "bun:test";
import { listDeadLetters } from "../dead-letters.ts";
import { deadLetter, tenantOf } from "./dead-letter.ts";
import { fakeMsg, itemSpec, openTestNats, until } from "../../../test/helpers/consume-fakes.ts";
import type { DeadLetterInfo } from "./types.ts";

let t: Awaited<ReturnType<typeof openTestNats>>;
beforeAll(async () => {
  t = await openTestNats("deadletter");
});
afterAll(() => t.close());

test("a dead letter is stored with its reason and tenant, then the original is acked and reported once", async () => {
  const { spec, subject } = await t.stream();
  await t.publish(subject, { i: 7, tenantId: "tenant-7" });
  const m = await (await t.nats.js.consumers.get(spec.name(t.topology), "worker")).next({ expires: 5_000 });
  if (!m) throw new Error("no message");
  const dead: DeadLetterInfo[] = [];
  const rt = t.runtime(spec, { onDeadLetter: (d) => dead.push(d) });
  rt.held.set(m, Date.now());
  await deadLetter(rt, m, { i: 7, tenantId: "tenant-7" }, "row refused");
  expect(rt.held.size).toBe(0);
  expect(dead).toEqual([
    {
      stream: spec.name(t.topology),
      subject,
      seq: m.seq,
      deliveries: 1,
      tenant: "tenant-7",
      reason: "row refused",
      // The ledger reads the body and the headers (docs/ledger.md).
      data: m.data,
      headers: m.headers,
    },
  ]);
  const [letter] = await listDeadLetters(t.nats.jsm, t.topology, {});
  expect(letter).toMatchObject({ stream: spec.name(t.topology), subject, tenant: "tenant-7", error: "row refused" });
  await until(async () => {
    const info = await t.nats.jsm.consumers.info(spec.name(t.topology), "worker");
    return info.num_ack_pending === 0 && info.num_pending === 0;
  }, "the original acked");
});

test("the tenant of a message that did not decode is a best guess from its body, bounded, or none", () => {
  expect(tenantOf(itemSpec, { i: 1, tenantId: "decoded" }, fakeMsg(1))).toBe("decoded");
  expect(tenantOf(itemSpec, undefined, fakeMsg(2, 1, { tenantId: "x".repeat(500) }))).toHaveLength(200);
  expect(tenantOf(itemSpec, undefined, fakeMsg(3, 1, { tenantId: 42 }))).toBeUndefined();
  const unreadable = Object.assign(fakeMsg(4), {
    json: () => {
      throw new SyntaxError("not json");
    },
  });
  expect(tenantOf(itemSpec, undefined, unreadable)).toBeUndefined();
});
