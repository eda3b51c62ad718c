import { readFileSync } from "node:fs";
import type { ConnectionExtras } from "../db/client.ts";

/**
 * Verified TLS to Postgres when DATABASE_TLS_CA_FILE names the CA that signed the server's
 * certificate. Without it, DATABASE_URL's own `?sslmode=` applies (postgres.js: `require`
 * encrypts without verifying, `verify-full` verifies against the system CAs).
 */
export function postgresTls(s: { DATABASE_TLS_CA_FILE: string }): ConnectionExtras["ssl"] | undefined {
  if (!s.DATABASE_TLS_CA_FILE) return undefined;
  return { ca: readFileSync(s.DATABASE_TLS_CA_FILE, "utf8"), rejectUnauthorized: true };
}
