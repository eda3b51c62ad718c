import { expect, test } from "bun:test";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { createLastKnownKeys } from "./last-known-keys.ts";

const key = (id: string): ResolvedKey => ({
  id,
  tenantId: "t",
  kind: "telemetry",
  serviceName: null,
  allowedOrigins: null,
  userId: null,
  userRole: null,
  tenantPlan: "pro",
});

test("a key seen valid is recalled until it is older than the max age, and forgotten at once when found revoked", () => {
  let now = 0;
  const lk = createLastKnownKeys({ maxAgeMs: 1000, now: () => now });
  lk.remember("cel_tk_a", key("a"));
  expect(lk.recall("cel_tk_a")?.id).toBe("a");
  expect(lk.recall("cel_tk_b")).toBeNull();
  now = 1001;
  expect(lk.recall("cel_tk_a")).toBeNull();
  lk.remember("cel_tk_a", key("a"));
  lk.forget("cel_tk_a");
  expect(lk.recall("cel_tk_a")).toBeNull();
});

test("holds at most maxEntries keys, dropping the least recently seen", () => {
  const lk = createLastKnownKeys({ maxEntries: 2 });
  lk.remember("k1", key("1"));
  lk.remember("k2", key("2"));
  lk.remember("k1", key("1")); // seen again: now the newest
  lk.remember("k3", key("3"));
  expect(lk.size).toBe(2);
  expect(lk.recall("k2")).toBeNull();
  expect(lk.recall("k1")?.id).toBe("1");
  expect(lk.recall("k3")?.id).toBe("3");
});
