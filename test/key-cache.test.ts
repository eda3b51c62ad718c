import { beforeAll, describe, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { HttpError } from "@cellar/shared/errors";
import { useTestDatabase } from "./helpers/test-database";

const testDb = useTestDatabase();
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  tenant = await bootstrapTenant(testDb.database.db, { name: "keys", plan: "free" });
});

const randomKey = () => `cel_pk_${crypto.randomUUID()}`;

describe("key cache: bounded LRU with negative entries", () => {
  test("an unknown key is cached as unknown: asked again, it costs no query", async () => {
    const keys = new KeyResolver(testDb.database.db, { ttlMs: 60_000 });
    const k = randomKey();
    expect(await keys.resolve(k)).toBeNull();
    expect(await keys.resolve(k)).toBeNull();
    expect(keys.lookups).toBe(1);
  });

  test("a spray of unknown keys past the cache size evicts the least recently used, not a key in use", async () => {
    const keys = new KeyResolver(testDb.database.db, { ttlMs: 60_000, maxEntries: 50, missesPerSecond: 0 });
    expect((await keys.resolve(tenant.telemetryKey))?.tenantId).toBe(tenant.tenantId);
    for (let i = 0; i < 200; i++) {
      await keys.resolve(randomKey());
      // The valid key is used between sprays, so it stays recent.
      if (i % 10 === 0) expect((await keys.resolve(tenant.telemetryKey))?.tenantId).toBe(tenant.tenantId);
    }
    // 1 valid + 200 unknown; the valid key was never looked up again.
    expect(keys.lookups).toBe(201);
  });

  test("per client address, uncached keys get 429 with Retry-After once the bucket is empty; cached keys still answer", async () => {
    let now = 1_000_000;
    const keys = new KeyResolver(testDb.database.db, {
      ttlMs: 60_000,
      missesPerSecond: 1,
      missBurst: 5,
      now: () => now,
    });
    expect(await keys.resolve(tenant.telemetryKey, "10.0.0.1")).not.toBeNull();
    for (let i = 0; i < 4; i++) expect(await keys.resolve(randomKey(), "10.0.0.1")).toBeNull();
    const refused = await keys.resolve(randomKey(), "10.0.0.1").catch((e) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(429);
    expect(Number((refused as HttpError).headers["retry-after"])).toBeGreaterThan(0);
    const lookupsBefore = keys.lookups;
    // The cached valid key answers from memory, and another address has its own bucket.
    expect((await keys.resolve(tenant.telemetryKey, "10.0.0.1"))?.tenantId).toBe(tenant.tenantId);
    expect(await keys.resolve(randomKey(), "10.0.0.2")).toBeNull();
    expect(keys.lookups).toBe(lookupsBefore + 1);
    now += 2_000; // the bucket refills
    expect(await keys.resolve(randomKey(), "10.0.0.1")).toBeNull();
  });

  test("a valid key's refresh after its TTL is not refused when a sprayer emptied the address's bucket", async () => {
    let now = 3_000_000;
    const keys = new KeyResolver(testDb.database.db, {
      ttlMs: 1_000,
      missesPerSecond: 0.0001,
      missBurst: 1,
      now: () => now,
    });
    expect(await keys.resolve(tenant.telemetryKey, "10.0.0.9")).not.toBeNull(); // takes the only token
    expect(((await keys.resolve(randomKey(), "10.0.0.9").catch((e) => e)) as HttpError).status).toBe(429);
    now += 2_000; // the valid key's entry has expired; the bucket is still empty
    expect((await keys.resolve(tenant.telemetryKey, "10.0.0.9"))?.tenantId).toBe(tenant.tenantId);
    expect(((await keys.resolve(randomKey(), "10.0.0.9").catch((e) => e)) as HttpError).status).toBe(429);
  });

  test("a revoked key stops working once its entry's TTL passes", async () => {
    let now = 5_000_000;
    const keys = new KeyResolver(testDb.database.db, { ttlMs: 1_000, now: () => now });
    expect(await keys.resolve(tenant.platformKey)).not.toBeNull();
    await testDb.database.sql`update api_keys set revoked_at = now() where id = ${tenant.platformKeyId}`;
    expect(await keys.resolve(tenant.platformKey)).not.toBeNull();
    now += 1_500;
    expect(await keys.resolve(tenant.platformKey)).toBeNull();
  });
});
