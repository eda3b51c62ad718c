import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ConsumerInfo } from "@nats-io/jetstream";
import type { StreamSpec } from "../catalogue.ts";
import { eachRunner } from "./each.ts";
import { drainRetired, lastActive, pullLanes } from "./lanes.ts";
import { openTestNats, until, type Item } from "../../../test/helpers/consume-fakes.ts";

let t: Awaited<ReturnType<typeof openTestNats>>;
beforeAll(async () => {
  t = await openTestNats("lanes");
});
afterAll(() => t.close());

const consumerExists = (stream: string, durable: string) =>
  t.nats.jsm.consumers.info(stream, durable).then(
    () => true,
    () => false,
  );

test("the retired consumer is pulled until it has nothing left and was quiet, then deleted", async () => {
  const { spec, subject } = await t.stream(["old"]);
  for (let i = 0; i < 5; i++) await t.publish(subject, { i, tenantId: "a" });
  const rt = t.runtime(spec, { policy: { retired: { checkEveryMs: 50, quietMs: 0 } } });
  const seen: number[] = [];
  const runner = eachRunner<Item>(rt, { each: { maxInFlight: 4 }, handle: async (d) => void seen.push(d.value.i) });
  await drainRetired(rt, "old", runner.acceptFor("retired"), runner.maxMessages);
  await runner.drain();
  expect(seen.sort()).toEqual([0, 1, 2, 3, 4]);
  expect(await consumerExists(spec.name(t.topology), "old")).toBe(false);
});

test("a retired consumer that still sees traffic within the quiet period is kept", async () => {
  const { spec, subject } = await t.stream(["old"]);
  await t.publish(subject, { i: 1, tenantId: "a" });
  const rt = t.runtime(spec, { policy: { retired: { checkEveryMs: 50, quietMs: 60 * 60_000 } } });
  const seen: number[] = [];
  const runner = eachRunner<Item>(rt, { each: { maxInFlight: 4 }, handle: async (d) => void seen.push(d.value.i) });
  const drained = drainRetired(rt, "old", runner.acceptFor("retired"), runner.maxMessages);
  await until(() => seen.length === 1, "the retired consumer's message handled");
  rt.stop();
  await drained;
  expect(await consumerExists(spec.name(t.topology), "old")).toBe(true);
});

test("every lane's consumer is pulled, and the retired one with its own handler", async () => {
  const { subject, spec: base } = await t.stream(["w-00", "w-01", "old"]);
  const spec: StreamSpec<Item> = {
    ...base,
    consumer: {
      ...base.consumer!,
      durable: "w",
      lanes: { count: 2, filter: () => subject, retired: { durable: "old", subjects: () => [subject] } },
    },
  };
  await t.publish(subject, { i: 1, tenantId: "a" });
  const rt = t.runtime(spec, { policy: { retired: { checkEveryMs: 50, quietMs: 60 * 60_000 } } });
  const byLane: string[] = [];
  const runner = eachRunner<Item>(rt, { each: { maxInFlight: 8 }, handle: async () => void byLane.push("lane") });
  const pulled = pullLanes(rt, runner, async () => void byLane.push("retired"));
  // Three consumers see the one message: lane 00, lane 01 and the retired one.
  await until(() => byLane.length === 3, "each consumer handled the message");
  expect(byLane.sort()).toEqual(["lane", "lane", "retired"]);
  rt.stop();
  await pulled;
});

test("a consumer was last active at the latest of its delivery, its ack floor and its creation", () => {
  const at = (iso: string) => Date.parse(iso);
  const info = (delivered?: string, acked?: string) =>
    ({
      created: "2026-01-01T00:00:00Z",
      delivered: { last_active: delivered },
      ack_floor: { last_active: acked },
    }) as unknown as ConsumerInfo;
  expect(lastActive(info())).toBe(at("2026-01-01T00:00:00Z"));
  expect(lastActive(info("2026-01-03T00:00:00Z", "2026-01-02T00:00:00Z"))).toBe(at("2026-01-03T00:00:00Z"));
  expect(lastActive(info(undefined, "2026-01-02T00:00:00Z"))).toBe(at("2026-01-02T00:00:00Z"));
  expect(lastActive({} as ConsumerInfo)).toBe(0);
});
