import { expect, test } from "bun:test";
import { lockDurationMs, MAX_LOCK_MS } from "./lockout.ts";

test("four free failures, then a lock that doubles up to 15 minutes", () => {
  expect([1, 2, 3, 4].map(lockDurationMs)).toEqual([0, 0, 0, 0]);
  expect([5, 6, 7, 8].map(lockDurationMs)).toEqual([30_000, 60_000, 120_000, 240_000]);
  expect(lockDurationMs(50)).toBe(MAX_LOCK_MS);
});
