import { expect, test } from "bun:test";
import type { NatsConnection } from "@nats-io/transport-node";
import { assertPayloadFits, ENVELOPE_BYTES, messageIdFor } from "./publish.ts";

const base = {
  kind: "trace" as const,
  tenantId: "t1",
  serviceName: "svc",
  payload: { a: 1, b: { c: [1, { d: 2, e: 3 }] } },
};

test("the message id ignores key order but not content, tenant, service or kind", () => {
  const id = messageIdFor(base);
  expect(messageIdFor({ ...base, payload: { b: { c: [1, { e: 3, d: 2 }] }, a: 1 } })).toBe(id);
  expect(messageIdFor({ ...base, payload: { a: 2, b: base.payload.b } })).not.toBe(id);
  expect(messageIdFor({ ...base, tenantId: "t2" })).not.toBe(id);
  expect(messageIdFor({ ...base, serviceName: "other" })).not.toBe(id);
  expect(messageIdFor({ ...base, kind: "event" })).not.toBe(id);
  expect(id).toMatch(/^[0-9a-f]{64}$/);
});

test("with an id source, the message id is the same for the same text and differs for any other text", () => {
  const raw = JSON.stringify(base.payload);
  const id = messageIdFor({ ...base, idSource: raw });
  expect(messageIdFor({ ...base, idSource: raw })).toBe(id);
  expect(messageIdFor({ ...base, idSource: JSON.stringify({ b: base.payload.b, a: 1 }) })).not.toBe(id);
  expect(messageIdFor({ ...base, idSource: `${raw} ` })).not.toBe(id);
  expect(messageIdFor({ ...base, idSource: raw, tenantId: "t2" })).not.toBe(id);
  expect(messageIdFor({ ...base, idSource: raw, kind: "event" })).not.toBe(id);
});

test("start-up refuses a nats-server whose max_payload cannot carry the largest body", () => {
  const nc = (max: number) => ({ info: { max_payload: max } }) as unknown as NatsConnection;
  expect(() => assertPayloadFits(nc(8 * 1024 * 1024), 4 * 1024 * 1024)).not.toThrow();
  expect(() => assertPayloadFits(nc(1024 * 1024), 4 * 1024 * 1024)).toThrow(/max_payload/);
  expect(() => assertPayloadFits(nc(4 * 1024 * 1024), 4 * 1024 * 1024)).toThrow(/max_payload/);
  expect(() => assertPayloadFits(nc(4 * 1024 * 1024 + ENVELOPE_BYTES), 4 * 1024 * 1024)).not.toThrow();
});

test("a publish that throws synchronously fails its own request, not the others in its batch", async () => {
  const { createPublisher } = await import("./publish.ts");
  const { createLogger } = await import("@cellar/shared/logger");
  const { createTopology } = await import("@cellar/shared/nats/topology");
  let calls = 0;
  const js = {
    publish: (_s: string, data: Uint8Array) => {
      calls++;
      if (new TextDecoder().decode(data).includes("boom")) throw new Error("sync failure");
      return Promise.resolve({ stream: "INGEST", seq: calls, duplicate: false });
    },
  } as never;
  const store = createPublisher({
    js,
    topology: createTopology("u"),
    logger: createLogger("silent"),
    now: () => new Date(0),
    maxBodyBytes: 1024,
    publishTimeoutMs: 1000,
    maxInFlight: 10,
  });
  const results = await Promise.allSettled(
    ["a", "boom", "c"].map((session_id) =>
      store({
        kind: "event",
        tenantId: "t",
        serviceName: "s",
        payload: { name: "e", session_id, timestamp: "2025-01-01T00:00:00Z" },
      }),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(((results[1] as PromiseRejectedResult).reason as { status: number }).status).toBe(503);
  expect(calls).toBe(3);
});

/** A publisher over a stand-in JetStream client, the clock at 0. */
async function storeAllOver(js: never, limits: { maxBodyBytes: number; maxMessageBytes: number }) {
  const { createPublishing } = await import("./publish.ts");
  const { createLogger } = await import("@cellar/shared/logger");
  const { createTopology } = await import("@cellar/shared/nats/topology");
  return createPublishing({
    js,
    topology: createTopology("u"),
    logger: createLogger("silent"),
    now: () => new Date(0),
    publishTimeoutMs: 1000,
    maxInFlight: 10,
    ...limits,
  });
}

test("a request's items go in one message, split only where it would pass the maximum payload; the same items make the same ids", async () => {
  const sent: Array<{ subject: string; data: string; msgID: string }> = [];
  const seen = new Set<string>();
  const js = {
    publish: (subject: string, data: Uint8Array, opts: { msgID: string }) => {
      sent.push({ subject, data: new TextDecoder().decode(data), msgID: opts.msgID });
      const duplicate = seen.has(opts.msgID);
      seen.add(opts.msgID);
      return Promise.resolve({ stream: "INGEST", seq: sent.length, duplicate });
    },
  } as never;
  const { storeAll } = await storeAllOver(js, { maxBodyBytes: 1024, maxMessageBytes: 2_000 });
  const input = (i: number) => ({
    kind: "event" as const,
    tenantId: "00000000-0000-4000-8000-000000000001",
    serviceName: "s",
    payload: { name: "e", session_id: `s-${i}`, timestamp: "2025-01-01T00:00:00Z", body: "x".repeat(400) },
  });
  const one = await storeAll([input(1), input(2)]);
  expect(sent).toHaveLength(1);
  expect(one).toMatchObject([{ duplicate: false, inputs: [input(1), input(2)] }]);
  expect(sent[0].subject).toMatch(/^u\.ingest\.batch\.\d\d$/);
  const message = JSON.parse(sent[0].data);
  expect(message).toMatchObject({ kind: "batch", tenantId: input(1).tenantId, receivedAt: "1970-01-01T00:00:00.000Z" });
  expect(message.items.map((i: { messageId: string }) => i.messageId)).toEqual([
    messageIdFor(input(1)),
    messageIdFor(input(2)),
  ]);
  expect(message.items[0].payload).toEqual(input(1).payload);

  sent.length = 0;
  const many = await storeAll([1, 2, 3, 4, 5, 6, 7].map(input));
  expect(sent.length).toBeGreaterThan(1);
  for (const s of sent) expect(new TextEncoder().encode(s.data).byteLength).toBeLessThanOrEqual(2_000);
  const items = sent.flatMap((s) =>
    JSON.parse(s.data).items.map((i: { payload: { session_id: string } }) => i.payload.session_id),
  );
  expect(items).toEqual(["s-1", "s-2", "s-3", "s-4", "s-5", "s-6", "s-7"]);
  // Its first message holds the two items stored above, in the same order: the same message.
  expect(many[0].duplicate).toBe(true);
  expect(many.slice(1).every((m) => !m.duplicate)).toBe(true);
  // The client's retry of the same request: every message is a duplicate of one JetStream has.
  const again = await storeAll([1, 2, 3, 4, 5, 6, 7].map(input));
  expect(again.every((m) => m.duplicate)).toBe(true);
});

test("a request's items are cut at BATCH_MESSAGE_BYTES even where the payload limit allows more; an item larger alone is one message", async () => {
  const { BATCH_MESSAGE_BYTES } = await import("./publish.ts");
  const sizes: number[] = [];
  const js = {
    publish: (_subject: string, data: Uint8Array) => {
      sizes.push(data.byteLength);
      return Promise.resolve({ stream: "INGEST", seq: sizes.length, duplicate: false });
    },
  } as never;
  const { storeAll } = await storeAllOver(js, { maxBodyBytes: 8 * 1024 * 1024, maxMessageBytes: 8 * 1024 * 1024 });
  const input = (i: number, bytes: number) => ({
    kind: "event" as const,
    tenantId: "00000000-0000-4000-8000-000000000001",
    serviceName: "s",
    payload: { name: "e", session_id: `s-${i}`, timestamp: "2025-01-01T00:00:00Z", body: "x".repeat(bytes) },
  });
  // 1,000 items of about 2.3 KB: a 2.3 MB batch, as bench/flood.ts's batch door sends.
  const stored = await storeAll(Array.from({ length: 1_000 }, (_, i) => input(i, 2_200)));
  expect(sizes.length).toBeGreaterThanOrEqual(5);
  for (const size of sizes) expect(size).toBeLessThanOrEqual(BATCH_MESSAGE_BYTES);
  expect(stored.flatMap((m) => m.inputs)).toHaveLength(1_000);
  sizes.length = 0;
  await storeAll([input(0, 100), input(1, BATCH_MESSAGE_BYTES + 1_000), input(2, 100)]);
  expect(sizes).toHaveLength(3);
  expect(sizes[1]).toBeGreaterThan(BATCH_MESSAGE_BYTES);
});
