import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { users, type Role } from "../db/schema/index.ts";

/** A database or a transaction: what a store writes through (Drizzle's builder). */
export type Writer = Pick<Db, "insert" | "update" | "delete">;

/**
 * The one writer of users: the admin CLI (shared/admin), the dashboard's sign-in (platform
 * signin/service.ts), dev and the tests create, deprovision and change users here only.
 */

/** A new user; undefined when the email is already a user of the tenant. */
export async function insertUser(
  w: Writer,
  input: { tenantId: string; email: string; role: Role },
): Promise<{ id: string } | undefined> {
  const [u] = await w
    .insert(users)
    .values({ tenantId: input.tenantId, email: input.email, role: input.role })
    .onConflictDoNothing()
    .returning({ id: users.id });
  return u;
}

/** Marks the user deprovisioned; undefined when there is no such user. */
export async function markUserDeprovisioned(w: Writer, id: string, at: Date): Promise<{ id: string } | undefined> {
  const [u] = await w.update(users).set({ deprovisionedAt: at }).where(eq(users.id, id)).returning({ id: users.id });
  return u;
}

/**
 * Sets the user's password hash and clears the failed-attempt lock; undefined when no such user
 * (with `activeOnly`, a deprovisioned one counts as none).
 */
export async function setUserPasswordHash(
  w: Writer,
  input: { userId: string; passwordHash: string; activeOnly?: boolean },
): Promise<{ id: string } | undefined> {
  const [u] = await w
    .update(users)
    .set({ passwordHash: input.passwordHash, failedSignIns: 0, lockedUntil: null })
    .where(
      input.activeOnly ? and(eq(users.id, input.userId), isNull(users.deprovisionedAt)) : eq(users.id, input.userId),
    )
    .returning({ id: users.id });
  return u;
}

/** A successful sign-in: the failed-attempt count and lock start over. */
export async function clearFailedSignIns(w: Writer, userId: string): Promise<void> {
  await w.update(users).set({ failedSignIns: 0, lockedUntil: null }).where(eq(users.id, userId));
}

/** One more failed sign-in, counted in SQL so concurrent failures all count; the new count. */
export async function countFailedSignIn(w: Writer, userId: string): Promise<number> {
  const [u] = await w
    .update(users)
    .set({ failedSignIns: sql`${users.failedSignIns} + 1` })
    .where(eq(users.id, userId))
    .returning({ failedSignIns: users.failedSignIns });
  return u?.failedSignIns ?? 0;
}

/** Locks the user's sign-in until `until`. */
export async function lockUserUntil(w: Writer, userId: string, until: Date): Promise<void> {
  await w.update(users).set({ lockedUntil: until }).where(eq(users.id, userId));
}
