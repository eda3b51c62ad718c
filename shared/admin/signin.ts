import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { invitations, users, type Role } from "../db/schema/index.ts";
import { hashKey } from "../auth/keys.ts";
import { endSignInSessionsOf } from "../auth/signin-session-store.ts";
import { setUserPasswordHash } from "../auth/user-store.ts";
import { hashPassword, passwordProblem } from "../auth/passwords.ts";
import { randomToken } from "../crypto.ts";
import { AdminError } from "../errors.ts";
import { createUser } from "./tenancy.ts";

/** How long an invitation link stays valid. */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * Sets (or resets) a user's dashboard password: clears the failed-attempt lock and ends every
 * open dashboard sign-in of the user, so a reset also locks out whoever knew the old one.
 */
export async function setPassword(db: Db, input: { userId: string; password: string }) {
  const problem = passwordProblem(input.password);
  if (problem) throw new AdminError(problem);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const u = await setUserPasswordHash(tx, { userId: input.userId, passwordHash, activeOnly: true });
    if (!u) throw new AdminError(`no active user ${input.userId}`);
    await endSignInSessionsOf(tx, input.userId, new Date());
    return { id: u.id };
  });
}

/**
 * An invitation: creates the user (role and projects exactly as `user create`) unless `userId`
 * names an existing one, and returns a one-time token, shown once, valid 7 days. The dashboard's
 * `/invite#<token>` page lets the user choose a password with it.
 */
export async function createInvitation(
  db: Db,
  input: { userId?: string; tenantId?: string; email?: string; role?: Role; projectIds?: string[]; now?: Date },
) {
  let userId = input.userId;
  if (!userId) {
    if (!input.tenantId || !input.email || !input.role)
      throw new AdminError("an invitation needs --user, or --tenant, --email and --role");
    userId = (
      await createUser(db, {
        tenantId: input.tenantId,
        email: input.email,
        role: input.role,
        projectIds: input.projectIds,
      })
    ).id;
  } else {
    const [u] = await db
      .select({ gone: users.deprovisionedAt, tenantId: users.tenantId })
      .from(users)
      .where(eq(users.id, userId));
    // With a tenant scope (the dashboard's own tenant), another tenant's user is no user.
    if (!u || (input.tenantId !== undefined && u.tenantId !== input.tenantId))
      throw new AdminError(`no user ${userId}`, 404);
    if (u.gone) throw new AdminError("user is deprovisioned");
  }
  const token = `cel_inv_${randomToken(24)}`;
  const expiresAt = new Date((input.now ?? new Date()).getTime() + INVITATION_TTL_MS);
  const [row] = await db
    .insert(invitations)
    .values({ userId, tokenHash: hashKey(token), expiresAt })
    .returning({ id: invitations.id });
  return { id: row.id, userId, token, path: `/invite#${token}`, expiresAt: expiresAt.toISOString() };
}
