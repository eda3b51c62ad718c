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
    publish: (_s: string, data: string) => {
      calls++;
      if (data.includes("boom")) throw new Error("sync failure");
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
