import { expect, test } from "bun:test";
import { judge, rowCheck, type TenantBooks } from "./books.ts";

const books = (
  accepted: number,
  stored: number,
  traceRows: number,
  { storedTraces = stored, deadLettered = 0 } = {},
): TenantBooks => ({
  tenantId: "t",
  settled: { accepted, stored, deadLettered, replayed: 0 },
  storedTraces,
  traceRows,
});

test("more settled than accepted is an imbalance until INGEST confirmed what was accepted", () => {
  expect(judge(books(383, 380, 380, { deadLettered: 6 }))).toMatchObject({
    balanced: false,
    unaccounted: -3,
    problems: ["3 more items stored or dead-lettered than ingest counted accepted"],
  });
});

test("with accepted confirmed, the excess is a dead letter counted twice (redelivered), not an imbalance", () => {
  expect(judge(books(383, 380, 380, { deadLettered: 6 }), { acceptedConfirmed: true })).toEqual({
    tenantId: "t",
    balanced: true,
    redelivered: 3,
    unaccounted: 0,
    missingTraceRows: 0,
    problems: [],
  });
});

test("a double count never hides a row deleted behind the service's back", () => {
  expect(judge(books(383, 380, 379, { deadLettered: 6 }), { acceptedConfirmed: true })).toMatchObject({
    balanced: false,
    redelivered: 3,
    missingTraceRows: 1,
    problems: ["1 stored traces have no row"],
  });
  // Counted stored more often than there are rows (what a double count of stored looked like
  // before it was counted with the rows): reported, not set apart.
  expect(judge(books(383, 386, 383), { acceptedConfirmed: true })).toMatchObject({
    balanced: false,
    redelivered: 3,
    missingTraceRows: 3,
    problems: ["3 stored traces have no row"],
  });
});

test("fewer stored than accepted with nothing in flight is a loss, confirmed or not", () => {
  expect(judge(books(10, 8, 8), { acceptedConfirmed: true })).toMatchObject({ balanced: false, unaccounted: 2 });
});

const minute = (serviceName: string, at: number, storedTraces: number, traceRows: number, counted = true) => ({
  serviceName,
  minute: at * 60_000,
  storedTraces,
  traceRows,
  counted,
});

test("rows received before the ledger counted their service are not an imbalance (an online upgrade)", () => {
  // Minutes 0-1 written by the release without a ledger; the upgrade falls in minute 2 (3 rows of
  // the old processor, 4 counted by the new one); minute 3 all counted. "quiet" never counted.
  const check = rowCheck([
    minute("a", 0, 0, 5, false),
    minute("a", 1, 0, 2, false),
    minute("a", 2, 4, 7),
    minute("a", 3, 6, 6),
    minute("quiet", 1, 0, 9, false),
  ]);
  expect(check).toEqual({ storedTraces: 10, traceRows: 10, uncounted: 19 });
  const v = judge({
    tenantId: "t",
    settled: { accepted: 10, stored: 10, deadLettered: 0, replayed: 0 },
    storedTraces: check.storedTraces,
    traceRows: check.traceRows,
    uncountedRows: check.uncounted,
  });
  expect(v).toMatchObject({ balanced: true, missingTraceRows: 0, uncountedRows: 19, problems: [] });
});

test("a row deleted after the ledger started counting is still reported, in its first minute too", () => {
  // Deleted in the service's first counted minute (a shortfall there is never set apart).
  expect(rowCheck([minute("a", 0, 0, 5, false), minute("a", 1, 4, 3), minute("a", 2, 2, 2)])).toMatchObject({
    storedTraces: 6,
    traceRows: 5,
  });
  // Deleted in a later minute: exact both ways past the first.
  expect(rowCheck([minute("a", 1, 4, 4), minute("a", 2, 2, 1)])).toMatchObject({ storedTraces: 6, traceRows: 5 });
  // Rows the ledger never counted after its first minute: reported, never set apart.
  expect(rowCheck([minute("a", 1, 4, 4), minute("a", 2, 2, 3)])).toMatchObject({ storedTraces: 6, traceRows: 7 });
  // A service counted (accepted only) whose rows were all deleted: reported.
  expect(rowCheck([minute("b", 1, 3, 0)])).toMatchObject({ storedTraces: 3, traceRows: 0 });
});
