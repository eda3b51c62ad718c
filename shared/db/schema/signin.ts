import { index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { ts } from "./columns.ts";
import { users } from "./tenancy.ts";

/** The columns of a token a user holds (a sign-in, an invitation): only its SHA-256 is kept. */
const userToken = () => ({
  id: uuid("id").primaryKey().defaultRandom(),
  userId: uuid("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  tokenHash: text("token_hash").notNull(),
  createdAt: ts("created_at").notNull().defaultNow(),
  expiresAt: ts("expires_at").notNull(),
});

/** A dashboard sign-in: the Bearer token's SHA-256, its user and its absolute expiry. */
export const dashboardSessions = pgTable(
  "dashboard_sessions",
  {
    ...userToken(),
    revokedAt: ts("revoked_at"),
  },
  (t) => [
    uniqueIndex("dashboard_sessions_token_uq").on(t.tokenHash),
    index("dashboard_sessions_user_idx").on(t.userId),
  ],
);

/** A one-time link that lets an invited user choose a password (token's SHA-256 only). */
export const invitations = pgTable(
  "invitations",
  {
    ...userToken(),
    acceptedAt: ts("accepted_at"),
  },
  (t) => [uniqueIndex("invitations_token_uq").on(t.tokenHash)],
);

/**
 * First run: the one-time setup token the platform prints while no organization exists
 * (apps/platform/src/setup). SHA-256 only; `usedAt` is set with the first organization.
 */
export const setupTokens = pgTable(
  "setup_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tokenHash: text("token_hash").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    usedAt: ts("used_at"),
  },
  (t) => [uniqueIndex("setup_tokens_hash_uq").on(t.tokenHash)],
);
