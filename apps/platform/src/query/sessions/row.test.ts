import { expect, test } from "bun:test";
import { readiness, type SessionRow } from "./row.ts";

const row = (over: Partial<SessionRow>): SessionRow => ({
  pk: "p",
  session_id: "s",
  trace_service_id: "t",
  status: "matured",
  maturation_count: 1,
  matured_at: new Date(),
  activity_seq: 3,
  idle_seconds: 0,
  through_activity_seq: 3,
  computed_at: new Date(),
  item_count: 1,
  truncated: false,
  ...over,
});

test("processing before any materialization, partial with newer activity, complete otherwise", () => {
  expect(readiness(row({ through_activity_seq: null, idle_seconds: 10 }), 60)).toEqual({
    status: "processing",
    retryAfterSeconds: 51,
  });
  expect(readiness(row({ activity_seq: 4, idle_seconds: 2 }), 60)).toEqual({
    status: "partial",
    retryAfterSeconds: 59,
  });
  expect(readiness(row({}), 60)).toEqual({ status: "complete" });
});

test("retryAfterSeconds never drops below 1, even long past the window", () => {
  expect(readiness(row({ through_activity_seq: null, idle_seconds: 9_999 }), 60).retryAfterSeconds).toBe(1);
});
