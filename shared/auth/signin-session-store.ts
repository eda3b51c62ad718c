import { and, eq, isNull, lt, or } from "drizzle-orm";
import { dashboardSessions } from "../db/schema/index.ts";
import type { Writer } from "./user-store.ts";

/**
 * The one writer of dashboard sign-ins (dashboard_sessions): the platform's sign-in service opens
 * and ends them, the admin CLI's password reset ends a user's all.
 */

/** How long an ended or expired sign-in is kept (audits of "who was signed in"). */
const KEEP_ENDED_MS = 86_400_000;

/**
 * Opens a sign-in for the token's hash. Housekeeping on the user's own rows: ended sign-ins older
 * than a day go, so the table grows with sign-ins of the last day only.
 */
export async function openSignInSession(
  w: Writer,
  input: { userId: string; tokenHash: string; expiresAt: Date; now: Date },
): Promise<void> {
  await w
    .insert(dashboardSessions)
    .values({ userId: input.userId, tokenHash: input.tokenHash, expiresAt: input.expiresAt });
  const cutoff = new Date(input.now.getTime() - KEEP_ENDED_MS);
  await w
    .delete(dashboardSessions)
    .where(
      and(
        eq(dashboardSessions.userId, input.userId),
        or(lt(dashboardSessions.expiresAt, cutoff), lt(dashboardSessions.revokedAt, cutoff)),
      ),
    );
}

/** Ends one sign-in (sign out); an ended one stays as it was. */
export async function endSignInSession(w: Writer, id: string, at: Date): Promise<void> {
  await w
    .update(dashboardSessions)
    .set({ revokedAt: at })
    .where(and(eq(dashboardSessions.id, id), isNull(dashboardSessions.revokedAt)));
}

/** Ends every open sign-in of the user (a password reset locks out whoever knew the old one). */
export async function endSignInSessionsOf(w: Writer, userId: string, at: Date): Promise<void> {
  await w
    .update(dashboardSessions)
    .set({ revokedAt: at })
    .where(and(eq(dashboardSessions.userId, userId), isNull(dashboardSessions.revokedAt)));
}
