import { expect, test } from "bun:test";
import type { NatsConnection } from "@nats-io/transport-node";
import { assertPayloadFits, ENVELOPE_BYTES, messageIdFor } from "./publish";

const base = { kind: "trace" as const, tenantId: "t1", serviceName: "svc", payload: { a: 1, b: { c: [1, { d: 2, e: 3 }] } } };

test("the message id ignores key order but not content, tenant, service or kind", () => {
  const id = messageIdFor(base);
  expect(messageIdFor({ ...base, payload: { b: { c: [1, { e: 3, d: 2 }] }, a: 1 } })).toBe(id);
  expect(messageIdFor({ ...base, payload: { a: 2, b: base.payload.b } })).not.toBe(id);
  expect(messageIdFor({ ...base, tenantId: "t2" })).not.toBe(id);
  expect(messageIdFor({ ...base, serviceName: "other" })).not.toBe(id);
  expect(messageIdFor({ ...base, kind: "event" })).not.toBe(id);
  expect(id).toMatch(/^[0-9a-f]{64}$/);
});

test("start-up refuses a nats-server whose max_payload cannot carry the largest body", () => {
  const nc = (max: number) => ({ info: { max_payload: max } }) as unknown as NatsConnection;
  expect(() => assertPayloadFits(nc(8 * 1024 * 1024), 4 * 1024 * 1024)).not.toThrow();
  expect(() => assertPayloadFits(nc(1024 * 1024), 4 * 1024 * 1024)).toThrow(/max_payload/);
  expect(() => assertPayloadFits(nc(4 * 1024 * 1024), 4 * 1024 * 1024)).toThrow(/max_payload/);
  expect(() => assertPayloadFits(nc(4 * 1024 * 1024 + ENVELOPE_BYTES), 4 * 1024 * 1024)).not.toThrow();
});
