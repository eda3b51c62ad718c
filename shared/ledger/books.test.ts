import { expect, test } from "bun:test";
import { judge, type TenantBooks } from "./books.ts";

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
