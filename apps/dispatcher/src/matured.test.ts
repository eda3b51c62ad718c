import { expect, test } from "bun:test";
import type { MaturedMessage } from "@cellar/shared/payloads";
import type { PendingDelivery } from "./fanout.ts";
import { firstAttempt, handleMatured } from "./matured.ts";
import { fakePieces, msgWith, row } from "../../../test/helpers/dispatch-pieces.ts";

const event = { type: "session.matured", tenantId: "tenant-1", sessionId: "conv-1" } as MaturedMessage;
const pending = (id: string, over: Partial<PendingDelivery> = {}): PendingDelivery => ({
  id,
  eventKey: "k",
  tenantId: "tenant-1",
  attempts: 0,
  fresh: true,
  row: row(id),
  ...over,
});

test("a fresh MATURED message attempts only the deliveries it inserted; a redelivered one takes over every pending one", async () => {
  const fanned = [pending("mine"), pending("theirs", { fresh: false, row: undefined })];
  const f = fakePieces({ rows: { theirs: row("theirs") } });
  await handleMatured(f.pieces, async () => fanned, { value: event, msg: msgWith(1) });
  expect(f.attempted.map((a) => a.id)).toEqual(["mine"]);
  await handleMatured(f.pieces, async () => fanned, { value: event, msg: msgWith(2) });
  expect(f.attempted.map((a) => a.id).sort()).toEqual(["mine", "mine", "theirs"]);
});

test("a failed first attempt hands the delivery to DELIVERIES after attempt 1; a crowded destination before any", async () => {
  const failing = fakePieces({ verdict: { action: "nak", delayMs: 1_000 } });
  await firstAttempt(failing.pieces, pending("d1"));
  expect(failing.jobs).toEqual([{ deliveryId: "d1", tenantId: "tenant-1", afterAttempt: 1 }]);
  const crowded = fakePieces({ crowded: true });
  await firstAttempt(crowded.pieces, pending("d2"));
  expect(crowded.jobs).toEqual([{ deliveryId: "d2", tenantId: "tenant-1", afterAttempt: 0 }]);
  expect(crowded.attempted).toEqual([]);
});

test("a delivery already retried is handed back to its retry curve; one gone or done is left alone", async () => {
  const f = fakePieces({ rows: { done: row("done", { status: "delivered" }) } });
  await firstAttempt(f.pieces, pending("retried", { attempts: 3, row: undefined }));
  await firstAttempt(f.pieces, pending("done", { row: undefined }));
  await firstAttempt(f.pieces, pending("gone", { row: undefined }));
  expect(f.jobs).toEqual([{ deliveryId: "retried", tenantId: "tenant-1", afterAttempt: 3 }]);
  expect(f.attempted).toEqual([]);
});

test("a batch of trace maturations fans out each of them, with the fresh/take-over rule of a single one", async () => {
  const trace = (n: number) =>
    ({ type: "trace.matured", tenantId: "tenant-1", traceId: `t-${n}`, entityPk: `pk-${n}` }) as MaturedMessage;
  const batch = { type: "matured.batch" as const, tenantId: "tenant-1", maturations: [trace(1), trace(2)] };
  const asked: string[] = [];
  const fanOut = async (e: MaturedMessage) => {
    asked.push(e.traceId!);
    return e.traceId === "t-1"
      ? [pending("one")]
      : [pending("two"), pending("earlier", { fresh: false, row: undefined })];
  };
  const f = fakePieces({ rows: { earlier: row("earlier") } });
  await handleMatured(f.pieces, fanOut, { value: batch, msg: msgWith(1) });
  expect(asked).toEqual(["t-1", "t-2"]);
  expect(f.attempted.map((a) => a.id).sort()).toEqual(["one", "two"]);
  await handleMatured(f.pieces, fanOut, { value: batch, msg: msgWith(2) });
  expect(f.attempted.map((a) => a.id).sort()).toEqual(["earlier", "one", "one", "two", "two"]);
});

test("the same message run again after a transient failure owns the rows its first run inserted (issue 41)", async () => {
  const trace = (n: number) =>
    ({ type: "trace.matured", tenantId: "tenant-1", traceId: `t-${n}`, entityPk: `pk-${n}` }) as MaturedMessage;
  const batch = { type: "matured.batch" as const, tenantId: "tenant-1", maturations: [trace(1), trace(2)] };
  const f = fakePieces({ rows: { one: row("one"), two: row("two") } });
  let runs = 0;
  // The first run inserts both rows; its DELIVERIES publish times out (a NATS node lost).
  const fanOut = async (e: MaturedMessage) => [pending(e.traceId === "t-1" ? "one" : "two", { fresh: runs === 1 })];
  const failing = {
    ...f.pieces,
    attemptNow: async () => {
      throw Object.assign(new Error("TIMEOUT"), { code: "TIMEOUT" });
    },
  };
  const msg = msgWith(1);
  runs = 1;
  await expect(handleMatured(failing as typeof f.pieces, fanOut, { value: batch, msg })).rejects.toThrow();
  // The consume runtime runs the handler again with the same message (deliveryCount still 1).
  runs = 2;
  await handleMatured(f.pieces, fanOut, { value: batch, msg });
  expect(f.attempted.map((a) => a.id).sort()).toEqual(["one", "two"]);
});

test("a take-over refused the attempt claim hands the delivery on after the attempt in hand, unsent; a fresh one sends under its insert's claim", async () => {
  const heldUntil = new Date("2026-11-21T10:00:20Z");
  const f = fakePieces({ rows: { theirs: row("theirs") }, refused: { theirs: heldUntil, mine: heldUntil } });
  const fanned = [pending("mine", { leasedUntil: heldUntil }), pending("theirs", { fresh: false, row: undefined })];
  await handleMatured(f.pieces, async () => fanned, { value: event, msg: msgWith(2) });
  // "mine" holds the claim its insert took (the fake would refuse a second one); "theirs" is
  // being attempted elsewhere: handed on under the id its holder hands a failure on under.
  expect(f.attempted.map((a) => a.id)).toEqual(["mine"]);
  expect(f.jobs).toEqual([{ deliveryId: "theirs", tenantId: "tenant-1", afterAttempt: 1 }]);
});

test("a fresh delivery handed on crowded gives its insert's claim back, so its retry job can claim it", async () => {
  const leasedUntil = new Date("2026-11-21T10:00:30Z");
  const f = fakePieces({ crowded: true });
  await firstAttempt(f.pieces, pending("d1", { leasedUntil }));
  expect(f.released).toEqual([{ deliveryId: "d1", until: leasedUntil }]);
  expect(f.jobs).toEqual([{ deliveryId: "d1", tenantId: "tenant-1", afterAttempt: 0 }]);
});
