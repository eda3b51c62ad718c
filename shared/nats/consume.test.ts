import { afterAll, beforeAll, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { createLogger } from "../logger.ts";
import { jsonCodec, type StreamSpec } from "./catalogue.ts";
import { consume, type DeadLetterInfo, type Delivery } from "./consume.ts";
import { listDeadLetters, purgeDeadLetters, replayDeadLetter } from "./dead-letters.ts";
import { PermanentMessageError } from "./failure.ts";
import { connectNats, createTopology, ensureTopology, type NatsHandles } from "./topology.ts";

// The runtime against a real nats-server (test/preload.ts), on a test stream of its own.
let nats: NatsHandles;
const topology = createTopology(`c${crypto.randomUUID().replace(/-/g, "").slice(0, 8)}`);
const logger = createLogger("silent");
let n = 0;

const Item = Type.Object({ i: Type.Integer(), tenantId: Type.String() });
type Item = { i: number; tenantId: string };

/** A fresh stream + durable consumer per test, declared like a catalogue entry. */
async function testStream(
  mode: "batch" | "each",
  maxDeliver = 3,
): Promise<{ spec: StreamSpec<Item>; subject: string }> {
  const name = `${topology.ingestStream}_T${++n}`;
  const subject = `${topology.subjectPrefix}t${n}`;
  await nats.jsm.streams.add({ name, subjects: [subject] });
  await nats.jsm.consumers.add(name, {
    durable_name: "worker",
    ack_policy: "explicit" as never,
    ack_wait: 30_000_000_000,
  });
  const spec: StreamSpec<Item> = {
    key: "ingest",
    name: () => name,
    codec: jsonCodec(Item, (v) => v.tenantId),
    consumer: { durable: "worker", ackWaitMs: 30_000, maxAckPending: 1000, maxDeliver, backoffMs: [50], mode },
  };
  return { spec, subject };
}
const publish = (subject: string, body: unknown, id?: string) =>
  nats.js.publish(subject, typeof body === "string" ? body : JSON.stringify(body), id ? { msgID: id } : {});
async function settled(spec: StreamSpec<Item>) {
  const info = await nats.jsm.consumers.info(spec.name(topology), "worker");
  return info.num_ack_pending + info.num_pending === 0;
}
async function until(fn: () => Promise<boolean> | boolean, what: string, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out: ${what}`);
}

beforeAll(async () => {
  nats = await ensureTopology(await connectNats(process.env.NATS_URL!, "consume-test"), topology);
});
afterAll(async () => {
  for await (const name of nats.jsm.streams.names())
    if (name.startsWith(topology.ingestStream.split("_")[0])) await nats.jsm.streams.delete(name);
  await nats.nc.drain();
});

test("batch mode runs up to `concurrency` batches at once and acks every message once", async () => {
  const { spec, subject } = await testStream("batch");
  for (let i = 0; i < 60; i++) await publish(subject, { i, tenantId: "a" });
  let running = 0;
  let peak = 0;
  const seen: number[] = [];
  const loop = consume(
    spec,
    { ...nats, logger },
    {
      batch: { maxBatch: 10, maxWaitMs: 20, concurrency: 3 },
      handle: async (items) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 50));
        for (const d of items) seen.push(d.value.i);
        running--;
      },
    },
  );
  await until(() => seen.length >= 60, "all 60 handled");
  await until(() => settled(spec), "all acked");
  await loop.stop();
  expect(peak).toBe(3);
  expect([...seen].sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
});

test("a batch failing on one message's data commits the others and dead-letters only that one, with subject, headers, body, error and deliveries", async () => {
  const { spec, subject } = await testStream("batch");
  for (let i = 0; i < 20; i++) await publish(subject, { i, tenantId: `tenant-${i}` }, `id-${i}`);
  const committed = new Set<number>();
  const dead: DeadLetterInfo[] = [];
  const loop = consume(
    spec,
    { ...nats, logger, onDeadLetter: (d) => dead.push(d) },
    {
      batch: { maxBatch: 20, maxWaitMs: 50 },
      handle: async (items) => {
        // Like a transaction: all or nothing; 22007 (invalid datetime format) is permanent.
        if (items.some((d) => d.value.i === 13))
          throw Object.assign(new Error("time zone displacement out of range"), {
            name: "PostgresError",
            code: "22009",
          });
        for (const d of items) committed.add(d.value.i);
      },
    },
  );
  await until(() => dead.length === 1 && committed.size === 19, "19 committed, 1 dead letter");
  await until(() => settled(spec), "all settled");
  await loop.stop();
  expect(dead[0]).toMatchObject({ stream: spec.name(topology), subject, tenant: "tenant-13", deliveries: 1 });
  expect(dead[0].reason).toContain("22009 time zone displacement out of range");
  const [letter] = await listDeadLetters(nats.jsm, topology, {});
  expect(letter).toMatchObject({
    stream: spec.name(topology),
    subject,
    deliveries: 1,
    tenant: "tenant-13",
    body: JSON.stringify({ i: 13, tenantId: "tenant-13" }),
  });
  expect(letter.headers["Nats-Msg-Id"]).toEqual(["id-13"]);
  await purgeDeadLetters(nats.jsm, topology);
});

test("an unexplained failure is retried with backoff and dead-lettered on delivery maxDeliver", async () => {
  const { spec, subject } = await testStream("each", 3);
  await publish(subject, { i: 1, tenantId: "t" });
  const deliveries: number[] = [];
  const dead: DeadLetterInfo[] = [];
  const loop = consume(
    spec,
    { ...nats, logger, onDeadLetter: (d) => dead.push(d) },
    {
      each: { maxInFlight: 10 },
      handle: async (d: Delivery<Item>) => {
        deliveries.push(d.msg.info.deliveryCount);
        throw new TypeError("a bug");
      },
    },
  );
  await until(() => dead.length === 1, "dead letter after 3 deliveries");
  await loop.stop();
  expect(deliveries).toEqual([1, 2, 3]);
  expect(dead[0].reason).toBe("failed on delivery 3 of 3: a bug");
  await purgeDeadLetters(nats.jsm, topology);
});

test("an invalid message goes to dead letters at once and never reaches the handler", async () => {
  const { spec, subject } = await testStream("each");
  await publish(subject, "not json");
  await publish(subject, { i: "x", tenantId: "evil" });
  await publish(subject, { i: 7, tenantId: "fine" });
  const handled: number[] = [];
  const dead: DeadLetterInfo[] = [];
  const loop = consume(
    spec,
    { ...nats, logger, onDeadLetter: (d) => dead.push(d) },
    { each: { maxInFlight: 10 }, handle: async (d) => void handled.push(d.value.i) },
  );
  await until(() => dead.length === 2 && handled.length === 1, "two dead letters, one handled");
  await until(() => settled(spec), "settled");
  await loop.stop();
  expect(dead.map((d) => d.reason).sort()).toEqual([
    "invalid message: body is not valid JSON",
    "invalid message: invalid i: expected integer",
  ]);
  expect(dead.find((d) => d.reason.includes("integer"))?.tenant).toBe("evil");
  await purgeDeadLetters(nats.jsm, topology);
});

test("a transient failure keeps the batch in hand: no nak, no dead letter, committed once the dependency is back", async () => {
  const { spec, subject } = await testStream("batch", 2);
  for (let i = 0; i < 5; i++) await publish(subject, { i, tenantId: "t" });
  let down = true;
  let calls = 0;
  const committed = new Set<number>();
  const dead: DeadLetterInfo[] = [];
  const loop = consume(
    spec,
    { ...nats, logger, onDeadLetter: (d) => dead.push(d), policy: { transientBackoffMs: { first: 20, max: 50 } } },
    {
      batch: { maxBatch: 5, maxWaitMs: 20 },
      handle: async (items) => {
        calls++;
        if (down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
        for (const d of items) committed.add(d.value.i);
      },
    },
  );
  await until(() => calls >= 10, "ten attempts while down");
  down = false;
  await until(() => committed.size === 5, "all committed");
  await until(() => settled(spec), "settled");
  await loop.stop();
  expect(dead).toEqual([]);
  const info = await nats.jsm.consumers.info(spec.name(topology), "worker");
  expect(info.num_redelivered).toBe(0);
});

test("replay re-publishes with the original message id and headers; a still-remembered id is reported, not replayed", async () => {
  const { spec, subject } = await testStream("each");
  await publish(subject, { i: 5, tenantId: "t" }, "orig-5");
  const dead: DeadLetterInfo[] = [];
  let fail = true;
  const handled: Array<{ i: number; id: string }> = [];
  const loop = consume(
    spec,
    { ...nats, logger, onDeadLetter: (d) => dead.push(d) },
    {
      each: { maxInFlight: 10 },
      handle: async (d) => {
        if (fail) throw new PermanentMessageError("refused");
        handled.push({ i: d.value.i, id: d.msg.headers?.get("Nats-Msg-Id") ?? "" });
      },
    },
  );
  await until(() => dead.length === 1, "dead letter");
  fail = false;
  const [letter] = await listDeadLetters(nats.jsm, topology, { stream: spec.name(topology) });
  // The stream's duplicate window (2 min default) still holds orig-5.
  expect((await replayDeadLetter(nats.js, nats.jsm, topology, letter.seq)).status).toBe("duplicate");
  expect(await listDeadLetters(nats.jsm, topology)).toHaveLength(1);
  // Past the window the same id goes through. Here the stream forgets it by being recreated
  // (waiting out a short window is at the mercy of the server's expiry timer under load).
  await loop.stop();
  const durable = (await nats.jsm.consumers.info(spec.name(topology), "worker")).config;
  await nats.jsm.streams.delete(spec.name(topology));
  await nats.jsm.streams.add({ name: spec.name(topology), subjects: [subject] });
  await nats.jsm.consumers.add(spec.name(topology), durable);
  const loop2 = consume(
    spec,
    { ...nats, logger },
    {
      each: { maxInFlight: 10 },
      handle: async (d) => void handled.push({ i: d.value.i, id: d.msg.headers?.get("Nats-Msg-Id") ?? "" }),
    },
  );
  expect((await replayDeadLetter(nats.js, nats.jsm, topology, letter.seq)).status).toBe("replayed");
  await until(() => handled.length === 1, "replayed message handled");
  await loop2.stop();
  expect(handled[0]).toEqual({ i: 5, id: "orig-5" });
  expect(await listDeadLetters(nats.jsm, topology)).toHaveLength(0);
});

test("each dead letter is logged once, at warn, with tenant, stream and reason", async () => {
  const { spec, subject } = await testStream("batch");
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const capture = (base: Record<string, unknown>): typeof logger => ({
    debug: (msg, f) => void lines.push({ level: "debug", msg, fields: { ...base, ...f } }),
    info: (msg, f) => void lines.push({ level: "info", msg, fields: { ...base, ...f } }),
    warn: (msg, f) => void lines.push({ level: "warn", msg, fields: { ...base, ...f } }),
    error: (msg, f) => void lines.push({ level: "error", msg, fields: { ...base, ...f } }),
    child: (f) => capture({ ...base, ...f }),
  });
  await publish(subject, { i: 1, tenantId: "t-bad" });
  await publish(subject, { i: 2, tenantId: "t-good" });
  const dead: DeadLetterInfo[] = [];
  const loop = consume(
    spec,
    { ...nats, logger: capture({}), onDeadLetter: (d) => dead.push(d) },
    {
      batch: { maxBatch: 10, maxWaitMs: 20 },
      handle: async (items) => {
        if (items.some((d) => d.value.tenantId === "t-bad")) throw new PermanentMessageError("refused by the store");
      },
    },
  );
  await until(() => dead.length === 1, "dead letter");
  await until(() => settled(spec), "settled");
  await loop.stop();
  const logged = lines.filter((l) => l.msg === "message dead-lettered");
  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatchObject({
    level: "warn",
    fields: { tenant: "t-bad", stream: spec.name(topology), reason: "refused by the store" },
  });
  await purgeDeadLetters(nats.jsm, topology);
});

test("a batch handler that isolates its own messages reports one failure: that message alone is dead-lettered, the rest acked", async () => {
  const { spec, subject } = await testStream("batch");
  for (let i = 0; i < 4; i++) await publish(subject, { i, tenantId: "t" });
  const dead: DeadLetterInfo[] = [];
  let calls = 0;
  const loop = consume(
    spec,
    { ...nats, logger, onDeadLetter: (d) => dead.push(d) },
    {
      batch: { maxBatch: 4, maxWaitMs: 50 },
      handle: async (items) => {
        calls++;
        return items.map((d) =>
          d.value.i === 2
            ? { fail: Object.assign(new Error("numeric field overflow"), { name: "PostgresError", code: "22003" }) }
            : ("ack" as const),
        );
      },
    },
  );
  await until(() => dead.length === 1, "dead letter");
  await until(() => settled(spec), "settled");
  await loop.stop();
  expect(dead[0].reason).toBe("22003 numeric field overflow");
  expect(calls).toBe(1);
  await purgeDeadLetters(nats.jsm, topology);
});
