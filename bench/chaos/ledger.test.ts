import { expect, test } from "bun:test";
import { checkLedger, type Stored } from "./ledger";
import type { AckedItem, ReceivedWebhook, SessionRecord } from "./load";

const T0 = Date.parse("2026-11-23T12:00:00Z");
const subscriptions = { sessionReceivers: () => ["r"], traceReceivers: () => ["r"] };
const hook = (
  count: number,
  occurredAt: number,
  webhookId = `msg_${count}_${occurredAt}`,
  valid = true,
): ReceivedWebhook => ({
  receiver: "r",
  webhookId,
  type: "session.matured",
  valid,
  at: occurredAt + 100,
  data: {
    session_id: "s1",
    maturation_count: count,
    occurred_at: new Date(occurredAt).toISOString(),
    trace_service_id: "svc",
  },
});
const session: SessionRecord = { tenant: 0, sessionId: "s1", bursts: 2, lastAckAt: T0 };
const stored = (maturationCount: number, writes: number[]): Stored => ({
  traces: new Map(),
  events: new Map(),
  sessions: new Map([["s1", { status: "matured", maturationCount }]]),
  writes: new Map([["s1", writes]]),
});
const check = (s: Stored, hooks: ReceivedWebhook[], acked: AckedItem[] = []) =>
  checkLedger({ acked, sessions: [session], stored: s, hooks, subscriptions, windowOf: () => "steady" }).get("steady")!;

test("two maturations each after their own writes pass; a copy redelivered with the same webhook-id is fine", () => {
  const p = check(stored(2, [T0, T0 + 20_000]), [hook(1, T0 + 8_000), hook(1, T0 + 8_000), hook(2, T0 + 28_000)]);
  expect([p.duplicatedMaturations, p.webhooksMissing, p.badSignatures]).toEqual([0, 0, 0]);
});

test("a maturation with no write since the previous one is a duplicate; so is one count under two webhook-ids", () => {
  expect(check(stored(2, [T0]), [hook(1, T0 + 8_000), hook(2, T0 + 16_000)]).duplicatedMaturations).toBe(1);
  expect(
    check(stored(1, [T0]), [hook(1, T0 + 8_000, "msg_a"), hook(1, T0 + 8_000, "msg_b")]).duplicatedMaturations,
  ).toBe(1);
});

test("a write committed late (after a stalled transaction) counts at its commit time, and a skipped count is a missing webhook", () => {
  // Maturation 3 follows a write committed between maturation 2 and 3 (its ingested_at would say earlier).
  expect(
    check(stored(3, [T0, T0 + 20_000, T0 + 31_000]), [hook(1, T0 + 8_000), hook(2, T0 + 30_000), hook(3, T0 + 40_000)])
      .duplicatedMaturations,
  ).toBe(0);
  const p = check(stored(2, [T0, T0 + 20_000]), [hook(2, T0 + 28_000)]);
  expect(p.webhooksMissing).toBe(1);
});

test("acknowledged items missing from Postgres are lost; a bad signature is counted", () => {
  const acked: AckedItem[] = [{ kind: "event", id: "e1", tenant: 0, sessionId: "s1", ackAt: T0 }];
  const p = check(stored(1, [T0]), [hook(1, T0 + 8_000, "msg_1", false)], acked);
  expect(p.lost).toBe(1);
  expect(p.badSignatures).toBe(1);
});
