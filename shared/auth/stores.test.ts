import { beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { apiKeys, dashboardSessions, users } from "@cellar/shared/db/schema";
import { useTestDatabase } from "../../test/helpers/test-database.ts";
import { createApiKey, revokeApiKey, revokeOwnPlatformKey } from "./key-store.ts";
import { hashKey } from "./keys.ts";
import { endSignInSession, endSignInSessionsOf, openSignInSession } from "./signin-session-store.ts";
import {
  clearFailedSignIns,
  countFailedSignIn,
  insertUser,
  lockUserUntil,
  markUserDeprovisioned,
  setUserPasswordHash,
} from "./user-store.ts";

// The stores against a real Postgres: each is the only writer of its table (CONTRIBUTING.md).
const testDb = useTestDatabase();
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const db = () => testDb.database.db;
const user = async (id: string) => (await db().select().from(users).where(eq(users.id, id)))[0];

beforeAll(async () => {
  tenant = await bootstrapTenant(db(), { name: "stores" });
});

test("users: a second user with the same email in the tenant is refused; deprovisioning names the user or nothing", async () => {
  const u = await insertUser(db(), { tenantId: tenant.tenantId, email: "a@stores.test", role: "member" });
  expect(u?.id).toBeString();
  expect(await insertUser(db(), { tenantId: tenant.tenantId, email: "a@stores.test", role: "admin" })).toBeUndefined();
  expect(await markUserDeprovisioned(db(), u!.id, new Date())).toEqual({ id: u!.id });
  expect(await markUserDeprovisioned(db(), crypto.randomUUID(), new Date())).toBeUndefined();
  expect(await setUserPasswordHash(db(), { userId: u!.id, passwordHash: "h", activeOnly: true })).toBeUndefined();
});

test("users: concurrent failed sign-ins all count; a lock and a success clear as they should", async () => {
  const u = (await insertUser(db(), { tenantId: tenant.tenantId, email: "b@stores.test", role: "member" }))!;
  const counts = await Promise.all(Array.from({ length: 8 }, () => countFailedSignIn(db(), u.id)));
  expect(counts.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  const until = new Date(Date.now() + 60_000);
  await lockUserUntil(db(), u.id, until);
  expect((await user(u.id)).lockedUntil?.getTime()).toBe(until.getTime());
  await clearFailedSignIns(db(), u.id);
  expect(await user(u.id)).toMatchObject({ failedSignIns: 0, lockedUntil: null });
  await countFailedSignIn(db(), u.id);
  expect(await setUserPasswordHash(db(), { userId: u.id, passwordHash: "phc" })).toEqual({ id: u.id });
  expect(await user(u.id)).toMatchObject({ passwordHash: "phc", failedSignIns: 0, lockedUntil: null });
});

test("sign-ins: opening one removes the user's sign-ins ended over a day ago; ending is once, and all of a user's at once", async () => {
  const u = (await insertUser(db(), { tenantId: tenant.tenantId, email: "c@stores.test", role: "member" }))!;
  const now = new Date();
  const dayAgo = (n: number) => new Date(now.getTime() - n * 86_400_000);
  await db()
    .insert(dashboardSessions)
    .values([
      { userId: u.id, tokenHash: "old-expired", expiresAt: dayAgo(2) },
      { userId: u.id, tokenHash: "old-revoked", expiresAt: dayAgo(-1), revokedAt: dayAgo(2) },
      { userId: u.id, tokenHash: "recently-ended", expiresAt: dayAgo(-1), revokedAt: dayAgo(0.5) },
    ]);
  await openSignInSession(db(), { userId: u.id, tokenHash: hashKey("tok"), expiresAt: dayAgo(-1), now });
  const rows = () => db().select().from(dashboardSessions).where(eq(dashboardSessions.userId, u.id));
  expect((await rows()).map((r) => r.tokenHash).sort()).toEqual([hashKey("tok"), "recently-ended"].sort());
  const open = (await rows()).find((r) => r.tokenHash === hashKey("tok"))!;
  const first = new Date(now.getTime() + 1_000);
  await endSignInSession(db(), open.id, first);
  await endSignInSession(db(), open.id, new Date(now.getTime() + 5_000));
  expect((await rows()).find((r) => r.id === open.id)?.revokedAt?.getTime()).toBe(first.getTime());
  await openSignInSession(db(), { userId: u.id, tokenHash: hashKey("tok2"), expiresAt: dayAgo(-1), now });
  await endSignInSessionsOf(db(), u.id, now);
  expect((await rows()).every((r) => r.revokedAt !== null)).toBe(true);
});

test("keys: a user revokes only their own live platform key; the admin revokes any by id", async () => {
  const mine = await createApiKey(db(), { kind: "platform", userId: tenant.ownerId });
  const other = (await insertUser(db(), { tenantId: tenant.tenantId, email: "d@stores.test", role: "admin" }))!;
  expect(await revokeOwnPlatformKey(db(), { id: mine.id, userId: other.id, at: new Date() })).toBe(false);
  expect(await revokeOwnPlatformKey(db(), { id: tenant.telemetryKeyId, userId: tenant.ownerId, at: new Date() })).toBe(
    false,
  );
  expect(await revokeOwnPlatformKey(db(), { id: mine.id, userId: tenant.ownerId, at: new Date() })).toBe(true);
  expect(await revokeOwnPlatformKey(db(), { id: mine.id, userId: tenant.ownerId, at: new Date() })).toBe(false);
  await revokeApiKey(db(), { id: tenant.telemetryKeyId });
  const [telemetry] = await db().select().from(apiKeys).where(eq(apiKeys.id, tenant.telemetryKeyId));
  expect(telemetry.revokedAt).not.toBeNull();
});
