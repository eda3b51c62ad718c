import { expect, test } from "bun:test";
import { maturedStream } from "@cellar/shared/nats/catalogue";
import { createTopology } from "@cellar/shared/nats/topology";
import {
  maturationKey,
  maturationsOf,
  TRACES_PER_MATURED_MESSAGE,
  type MaturedMessage,
  type MaturedStreamMessage,
} from "@cellar/shared/payloads";
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
const session = (tenantId: string): MaturedMessage => ({
  type: "session.matured",
  tenantId,
  traceServiceId: `svc-${tenantId}`,
  serviceName: "bot",
  entityPk: `${tenantId}-session`,
  sessionId: "s",
  maturationCount: 2,
  occurredAt: at,
});
const encode = (m: MaturedStreamMessage) => new TextEncoder().encode(JSON.stringify(m));
const decode = (m: MaturedStreamMessage) => maturedStream.codec.decode("matured.trace.00", encode(m), undefined);

test("trace maturations go out a batch per tenant, sessions one by one; every maturation exactly once", () => {
  const given = [
    ...Array.from({ length: TRACES_PER_MATURED_MESSAGE + 3 }, (_, i) => trace("a", i)),
    session("a"),
    trace("b", 0),
    session("b"),
  ];
  const out = maturedStreamMessages(given);
  expect(out.map((o) => o.message.type)).toEqual([
    "session.matured",
    "session.matured",
    "trace.matured.batch",
    "trace.matured.batch",
    "trace.matured.batch",
  ]);
  const carried = out.flatMap((o) => maturationsOf(o.message));
  expect(carried.map(maturationKey).sort()).toEqual(given.map(maturationKey).sort());
  for (const o of out) {
    const m = o.message;
    if (m.type === "trace.matured.batch") {
      expect(m.traces.length).toBeLessThanOrEqual(TRACES_PER_MATURED_MESSAGE);
      expect(m.traces.every((t) => t.tenantId === m.tenantId)).toBe(true);
      expect(o.msgID).toMatch(/^traces:[0-9a-f]{64}$/);
    } else expect(o.msgID).toBe(maturationKey(m as MaturedMessage));
    // The subject is a trace's, in the tenant's lane: the dispatcher lane that had each trace.
    expect(maturedStream.subjectOf!(createTopology(), m)).toBe(
      maturedStream.subjectOf!(createTopology(), maturationsOf(m)[0]),
    );
    expect(decode(m)).toEqual({ ok: true, value: m });
  }
});

test("the same chunk gets the same message id whatever its order (the stream drops a replay of it)", () => {
  const chunk = [trace("a", 1), trace("a", 2), trace("a", 3)];
  const ids = (ms: MaturedMessage[]) => maturedStreamMessages(ms).map((o) => o.msgID);
  expect(ids([...chunk].reverse())).toEqual(ids(chunk));
  expect(ids(chunk.slice(1))).not.toEqual(ids(chunk));
});

test("a batch whose items are not trace maturations of its tenant is refused, naming the item", () => {
  const batch = (traces: MaturedMessage[]) =>
    ({ type: "trace.matured.batch", tenantId: "a", traces }) as MaturedStreamMessage;
  expect(decode(batch([trace("a", 1), trace("b", 2)]))).toEqual({
    ok: false,
    error: "invalid traces[1].tenantId: must be the batch's tenantId",
  });
  expect(decode(batch([session("a")]))).toEqual({
    ok: false,
    error: 'invalid traces[0].type: must be "trace.matured"',
  });
  const empty = decode(batch([]));
  expect(empty.ok).toBe(false);
  expect(decode(batch(Array.from({ length: TRACES_PER_MATURED_MESSAGE + 1 }, (_, i) => trace("a", i)))).ok).toBe(false);
});
