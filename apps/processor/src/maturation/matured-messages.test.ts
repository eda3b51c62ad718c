import { expect, test } from "bun:test";
import { maturedRollupsStream, maturedStream } from "@cellar/shared/nats/catalogue";
import { createTopology } from "@cellar/shared/nats/topology";
import { MATURATIONS_PER_MESSAGE, maturationKey, maturationsOf, type MaturedMessage } from "@cellar/shared/payloads";
import { maturedStreamMessages } from "./mature.ts";

const at = "2026-11-26T10:00:00.000Z";
const trace = (tenantId: string, n: number): MaturedMessage => ({
  type: "trace.matured",
  tenantId,
  traceServiceId: `svc-${tenantId}`,
  serviceName: "bot",
  entityPk: `${tenantId}-trace-${n}`,
  traceId: `t-${n}`,
  maturationCount: 1,
  occurredAt: at,
});
const session = (tenantId: string, n = 0): MaturedMessage => ({
  type: "session.matured",
  tenantId,
  traceServiceId: `svc-${tenantId}`,
  serviceName: "bot",
  entityPk: `${tenantId}-session-${n}`,
  sessionId: `s-${n}`,
  maturationCount: 2,
  occurredAt: at,
});
const topology = createTopology();
const encode = (m: unknown) => new TextEncoder().encode(JSON.stringify(m));
const decode = (m: unknown) => maturedStream.codec.decode("matured.trace.00", encode(m), undefined);
const rollups = (m: unknown) => {
  const decoded = maturedRollupsStream.codec.decode("matured.session.00", encode(m), undefined);
  return decoded.ok ? decoded.value : "refused";
};

test("trace maturations go out a batch per tenant, each on the subject its items take; sessions one by one; every one exactly once", () => {
  const given = [
    ...Array.from({ length: MATURATIONS_PER_MESSAGE + 3 }, (_, i) => trace("a", i)),
    session("a", 1),
    session("a", 2),
    trace("b", 0),
    session("b"),
  ];
  const out = maturedStreamMessages(given);
  expect(out.map((o) => o.message.type)).toEqual([
    "session.matured",
    "session.matured",
    "session.matured",
    "matured.batch",
    "matured.batch",
    "matured.batch",
  ]);
  const carried = out.flatMap((o) => maturationsOf(o.message));
  expect(carried.map(maturationKey).sort()).toEqual(given.map(maturationKey).sort());
  for (const { message, msgID } of out) {
    if (message.type === "matured.batch") {
      expect(message.maturations.length).toBeLessThanOrEqual(MATURATIONS_PER_MESSAGE);
      expect(message.maturations.every((m) => m.tenantId === message.tenantId && m.type === "trace.matured")).toBe(
        true,
      );
      expect(msgID).toMatch(/^batch:[0-9a-f]{64}$/);
      // The dispatcher lane sees what it saw before.
      for (const m of message.maturations)
        expect(maturedStream.subjectOf!(topology, message)).toBe(maturedStream.subjectOf!(topology, m));
    } else expect(msgID).toBe(maturationKey(message as MaturedMessage));
    expect(decode(message)).toEqual({ ok: true, value: message });
  }
});

test("the same chunk gets the same message id whatever its order (the stream drops a replay of it)", () => {
  const chunk = [trace("a", 1), trace("a", 2), trace("a", 3)];
  const ids = (ms: MaturedMessage[]) => maturedStreamMessages(ms).map((o) => o.msgID);
  expect(ids([...chunk].reverse())).toEqual(ids(chunk));
  expect(ids(chunk.slice(1))).not.toEqual(ids(chunk));
});

test("a batch mixing tenants or kinds, empty or too long is refused, naming the item", () => {
  const batch = (maturations: MaturedMessage[]) => ({ type: "matured.batch", tenantId: "a", maturations });
  expect(decode(batch([trace("a", 1), trace("b", 2)]))).toEqual({
    ok: false,
    error: "invalid maturations[1].tenantId: must be the batch's tenantId",
  });
  expect(decode(batch([trace("a", 1), session("a")]))).toEqual({
    ok: false,
    error: 'invalid maturations[1].type: must be "trace.matured", as maturations[0]',
  });
  expect(decode(batch([])).ok).toBe(false);
  expect(decode(batch(Array.from({ length: MATURATIONS_PER_MESSAGE + 1 }, (_, i) => trace("a", i)))).ok).toBe(false);
});

test("the rollups read a batch's sessions, and a single session as before", () => {
  expect(rollups({ type: "matured.batch", tenantId: "a", maturations: [session("a", 1), session("a", 2)] })).toEqual([
    session("a", 1),
    session("a", 2),
  ]);
  expect(rollups(session("a", 3))).toEqual([session("a", 3)]);
  expect(rollups(trace("a", 1))).toBeNull();
  expect(rollups({ type: "matured.batch", tenantId: "a", maturations: [trace("a", 1)] })).toBeNull();
});
