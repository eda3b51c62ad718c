import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { compileFilters, compileSort, unknownKey, type FilterSet } from "./filters.ts";
import { SESSION_FILTERS, SessionsFilteredBody } from "../query/sessions/search.ts";

// Fragments are only built here, never sent: the client never connects.
const sql = postgres("postgres://nobody@127.0.0.1:1/none");
const SET: FilterSet = SESSION_FILTERS;
const error = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  return null;
};

describe("compileFilters", () => {
  test("accepts every documented operator of each field type", () => {
    const ok: Array<[string, string, unknown]> = [
      ["sessionId", "contains", "abc"],
      ["sessionId", "notIn", ["a", "b"]],
      ["status", "in", ["active"]],
      ["label", "in", ["vip"]],
      ["costUsd", "lte", 0.5],
      ["lastActivityAt", "gte", "2025-01-01T00:00:00Z"],
      ["metrics.latencyP95Ms", "gt", 100],
    ];
    for (const [field, operator, value] of ok)
      expect(error(() => compileFilters(sql, SET, [{ field, operator, value }]))).toBeNull();
  });

  test("names the unknown field, the unknown operator, and the bad value", () => {
    expect(
      error(() =>
        compileFilters(sql, SET, [
          { field: "sessionId", operator: "equals", value: "x" },
          { field: "cost", operator: "gt", value: 1 },
        ]),
      ),
    ).toStartWith('unknown filter field "cost" in filters[1].field; known fields: sessionId');
    expect(error(() => compileFilters(sql, SET, [{ field: "costUsd", operator: "contains", value: "1" }]))).toBe(
      'unknown operator "contains" for field "costUsd" in filters[0].operator; allowed: equals, notEquals, gt, gte, lt, lte',
    );
    expect(error(() => compileFilters(sql, SET, [{ field: "status", operator: "equals", value: "done" }]))).toBe(
      "invalid filters[0].value: status is one of active, matured",
    );
    expect(
      error(() => compileFilters(sql, SET, [{ field: "lastActivityAt", operator: "gt", value: "yesterday" }])),
    ).toContain("ISO 8601");
    expect(error(() => compileFilters(sql, SET, [{ field: "sessionId", operator: "in", value: [] }]))).toContain(
      "non-empty array",
    );
    expect(error(() => compileFilters(sql, SET, [{ field: "metrics.bad-name", operator: "gt", value: 1 }]))).toContain(
      "unknown filter field",
    );
  });

  test("sorting only on sortable fields", () => {
    expect(
      error(() => compileSort(sql, SET, { field: "costUsd", direction: "asc" }, "lastActivityAt", "s.id")),
    ).toBeNull();
    expect(error(() => compileSort(sql, SET, { field: "label" }, "lastActivityAt", "s.id"))).toStartWith(
      'invalid sort.field: "label" is not sortable',
    );
  });
});

test("unknownKey walks objects and arrays of the schema", () => {
  expect(
    unknownKey(SessionsFilteredBody, { serviceName: "x", filters: [{ field: "a", operator: "b", value: 1 }] }),
  ).toBeNull();
  expect(unknownKey(SessionsFilteredBody, { serviceName: "x", skip: true })).toBe("skip");
  expect(unknownKey(SessionsFilteredBody, { serviceName: "x", sort: { field: "turns", dir: "asc" } })).toBe("sort.dir");
  expect(
    unknownKey(SessionsFilteredBody, {
      serviceName: "x",
      filters: [
        { field: "a", operator: "b", value: 1 },
        { field: "a", operator: "b", value: 1, x: 1 },
      ],
    }),
  ).toBe("filters[1].x");
});
