import { expect, test } from "bun:test";
import { judge, type TenantBooks } from "./books.ts";

const books = (accepted: number, stored: number, traceRows: number, storedTraces = stored): TenantBooks => ({
  tenantId: "t",
  settled: { accepted, stored, deadLettered: 0, replayed: 0 },
  storedTraces,
  traceRows,
});

test("more stored than accepted is an imbalance until INGEST confirmed what was accepted", () => {
  expect(judge(books(383, 386, 383))).toMatchObject({
    balanced: false,
    unaccounted: -3,
    problems: ["3 more items stored or dead-lettered than ingest counted accepted", "3 stored traces have no row"],
  });
});

test("with accepted confirmed, the excess is counted twice (redelivered), not an imbalance, and not a missing row", () => {
  expect(judge(books(383, 386, 383), { acceptedConfirmed: true })).toEqual({
    tenantId: "t",
    balanced: true,
    redelivered: 3,
    unaccounted: 0,
    missingTraceRows: 0,
    problems: [],
  });
});

test("a row deleted behind the service's back is still reported beside a double count", () => {
  expect(judge(books(383, 386, 382), { acceptedConfirmed: true })).toMatchObject({
    balanced: false,
    redelivered: 3,
    missingTraceRows: 1,
    problems: ["1 stored traces have no row"],
  });
  expect(judge(books(383, 383, 382), { acceptedConfirmed: true })).toMatchObject({
    balanced: false,
    missingTraceRows: 1,
  });
});

test("fewer stored than accepted with nothing in flight is a loss, confirmed or not", () => {
  expect(judge(books(10, 8, 8), { acceptedConfirmed: true })).toMatchObject({ balanced: false, unaccounted: 2 });
});
