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

test("maturations go out a batch per tenant and kind, each on the subject its items take; every one exactly once", () => {
  const given = [
    ...Array.from({ length: MATURATIONS_PER_MESSAGE + 3 }, (_, i) => trace("a", i)),
    session("a", 1),
    session("a", 2),
    trace("b", 0),
    session("b"),
    ...Array.from({ length: MATURATIONS_PER_MESSAGE }, (_, i) => session("c", i)),
  ];
  const out = maturedStreamMessages(given);
  expect(out.every((o) => o.message.type === "matured.batch")).toBe(true);
  // a's traces in two (100 + 3), a's sessions, b's trace, b's session, c's 100 sessions in one.
  expect(out.map((o) => maturationsOf(o.message).length).sort((x, y) => x - y)).toEqual([1, 1, 2, 3, 100, 100]);
  const carried = out.flatMap((o) => maturationsOf(o.message));
  expect(carried.map(maturationKey).sort()).toEqual(given.map(maturationKey).sort());
  for (const { message, msgID } of out) {
    if (message.type !== "matured.batch") throw new Error("a maturation went out alone");
    expect(message.maturations.length).toBeLessThanOrEqual(MATURATIONS_PER_MESSAGE);
    const kind = message.maturations[0].type;
    expect(message.maturations.every((m) => m.tenantId === message.tenantId && m.type === kind)).toBe(true);
    expect(msgID).toMatch(/^batch:[0-9a-f]{64}$/);
    // The dispatcher lane sees what it saw before.
    for (const m of message.maturations)
      expect(maturedStream.subjectOf!(topology, message)).toBe(maturedStream.subjectOf!(topology, m));
    expect(decode(message)).toEqual({ ok: true, value: message });
  }
  expect(new Set(out.map((o) => o.msgID)).size).toBe(out.length);
});

test("the same chunk gets the same message id whatever its order (the stream drops a replay of it)", () => {
  const ids = (ms: MaturedMessage[]) => maturedStreamMessages(ms).map((o) => o.msgID);
  for (const chunk of [
    [trace("a", 1), trace("a", 2), trace("a", 3)],
    [session("a", 1), session("a", 2), session("a", 3)],
  ]) {
    expect(ids([...chunk].reverse())).toEqual(ids(chunk));
    expect(ids(chunk.slice(1))).not.toEqual(ids(chunk));
  }
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
