import { expect, test } from "bun:test";
import type { DeliveryJob } from "@cellar/shared/payloads";
import { handleDeliveryAttempt, moveRetiredJob } from "./delivery-attempts.ts";
import { MAX_RETRY_AFTER_MS } from "./retry.ts";
import { fakePieces, msgWith, row } from "../../../test/helpers/dispatch-pieces.ts";

const job = (deliveryId: string, over: Partial<DeliveryJob> = {}) => ({
  value: { deliveryId, tenantId: "tenant-1", ...over } as DeliveryJob,
  msg: msgWith(1, 42),
});

test("a job whose delivery is gone is terminated, one already done is acked, neither attempted", async () => {
  const f = fakePieces({ rows: { done: row("done", { status: "delivered" }) } });
  expect(await handleDeliveryAttempt(f.pieces, job("gone"))).toEqual({ term: "delivery no longer exists" });
  expect(await handleDeliveryAttempt(f.pieces, job("done"))).toBe("ack");
  expect(f.attempted).toEqual([]);
});

test("a job early for its next attempt waits it out (at most the longest Retry-After); a manual one does not wait", async () => {
  const now = new Date("2026-11-21T10:00:00Z");
  const soon = row("soon", { next_attempt_at: new Date(now.getTime() + 30_000) });
  const late = row("late", { next_attempt_at: new Date(now.getTime() + 10 * MAX_RETRY_AFTER_MS) });
  const f = fakePieces({ rows: { soon, late }, now });
  expect(await handleDeliveryAttempt(f.pieces, job("soon"))).toEqual({ retryInMs: 30_000 });
  expect(await handleDeliveryAttempt(f.pieces, job("late"))).toEqual({ retryInMs: MAX_RETRY_AFTER_MS });
  expect(f.attempted).toEqual([]);
  expect(await handleDeliveryAttempt(f.pieces, job("soon", { manual: true }))).toBe("ack");
  expect(f.attempted).toEqual([{ id: "soon", manual: true }]);
});

test("a crowded destination sends the job back shortly without an attempt", async () => {
  const f = fakePieces({ rows: { d: row("d") }, crowded: true });
  const outcome = await handleDeliveryAttempt(f.pieces, job("d"));
  expect(outcome).toEqual({ retryInMs: expect.any(Number) });
  expect((outcome as { retryInMs: number }).retryInMs).toBeGreaterThan(0);
  expect(f.attempted).toEqual([]);
});

test("the attempt's verdict becomes the message's outcome: ack, nak with the curve's delay, term", async () => {
  const rows = { d: row("d") };
  expect(await handleDeliveryAttempt(fakePieces({ rows }).pieces, job("d"))).toBe("ack");
  const nak = fakePieces({ rows, verdict: { action: "nak", delayMs: 5_000 } });
  expect(await handleDeliveryAttempt(nak.pieces, job("d"))).toEqual({ retryInMs: 5_000 });
  const term = fakePieces({ rows, verdict: { action: "term", reason: "disabled" } });
  expect(await handleDeliveryAttempt(term.pieces, job("d"))).toEqual({ term: "disabled" });
});

test("a job of the retired consumer moves to its tenant's lane under an id derived from its sequence, unattempted", async () => {
  const f = fakePieces({ rows: { d: row("d", { tenant_id: "tenant-9" }) } });
  const old = { value: { deliveryId: "d" } as DeliveryJob, msg: msgWith(1, 77) };
  expect(await moveRetiredJob(f.pieces, old)).toBeUndefined();
  expect(f.published).toEqual([
    {
      subject: expect.stringContaining("deliveries.attempt."),
      body: { deliveryId: "d", tenantId: "tenant-9" },
      msgID: "d:lane:77",
    },
  ]);
  expect(f.attempted).toEqual([]);
  expect(await moveRetiredJob(f.pieces, { ...old, value: { deliveryId: "gone" } as DeliveryJob })).toEqual({
    term: "delivery no longer exists",
  });
});
