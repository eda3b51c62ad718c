import { expect, test } from "bun:test";
import type { IngestMessage } from "@cellar/shared/payloads";
import { settleAfterLookup, settleItems, storedCounts } from "./stored.ts";

const same = (rowMs: number, itemMs: number) => rowMs === itemMs;

test("an item is inserted once; a second copy in the same write is a duplicate", () => {
  expect(
    settleItems(
      [
        { key: "a", receivedMs: 1 },
        { key: "a", receivedMs: 1 },
      ],
      new Set(["a"]),
      new Map(),
      same,
    ),
  ).toEqual(["inserted", "duplicate"]);
});

test("a row already there is this copy's (again) or another copy's (duplicate) by its receipt; a row gone reads as again", () => {
  const there = new Map([
    ["mine", 5],
    ["other", 4],
  ]);
  expect(
    settleItems(
      [
        { key: "mine", receivedMs: 5 },
        { key: "other", receivedMs: 5 },
        { key: "gone", receivedMs: 5 },
      ],
      new Set(),
      there,
      same,
    ),
  ).toEqual(["again", "duplicate", "again"]);
});

const message = (kind: "trace" | "event", receivedAt: string, service = "s") =>
  ({ kind, tenantId: "t", serviceName: service, messageId: "m", receivedAt, payload: {} }) as unknown as IngestMessage;

test("counts per kind, duplicate and replayed at each item's receivedAt minute; written again counts nothing", () => {
  const a = message("trace", "2026-11-28T10:00:05.000Z");
  const b = message("trace", "2026-11-28T10:00:59.999Z");
  const c = message("event", "2026-11-28T10:01:00.000Z");
  const d = message("trace", "2026-11-28T10:01:30.000Z");
  const { rows, counted } = storedCounts(
    [
      { message: a, settled: "inserted" },
      { message: b, settled: "inserted" },
      { message: c, settled: "duplicate" },
      { message: d, settled: "again" },
    ],
    { replayed: new Set([b, c, d]) },
  );
  expect(rows).toEqual([
    {
      tenant_id: "t",
      service_name: "s",
      minute: "2026-11-28T10:00:00.000Z",
      stage: "stored",
      reason: "trace",
      count: 2,
    },
    { tenant_id: "t", service_name: "s", minute: "2026-11-28T10:00:00.000Z", stage: "replayed", reason: "", count: 1 },
    {
      tenant_id: "t",
      service_name: "s",
      minute: "2026-11-28T10:01:00.000Z",
      stage: "stored",
      reason: "duplicate",
      count: 1,
    },
    { tenant_id: "t", service_name: "s", minute: "2026-11-28T10:01:00.000Z", stage: "replayed", reason: "", count: 1 },
  ]);
  expect(counted.reduce((n, c) => n + c.n, 0)).toBe(5);
});

test("settleAfterLookup looks up nothing when every row was inserted, else only the items whose row was there", async () => {
  const same = (rowMs: number, itemMs: number) => rowMs === itemMs;
  const none = settleAfterLookup([{ key: "a", receivedMs: 1 }], new Set(["a"]), same, () => {
    throw new Error("looked up");
  });
  expect(none).toEqual(["inserted"]);
  const asked: number[][] = [];
  const items = [
    { key: "new", receivedMs: 1 },
    { key: "mine", receivedMs: 5 },
    { key: "other", receivedMs: 5 },
    { key: "gone", receivedMs: 5 },
  ];
  const settled = await settleAfterLookup(items, new Set(["new"]), same, async (there) => {
    asked.push(there);
    return new Map([
      ["mine", 5],
      ["other", 4],
    ]);
  });
  expect(asked).toEqual([[1, 2, 3]]);
  expect(settled).toEqual(["inserted", "again", "duplicate", "again"]);
});
