import type postgres from "postgres";
import { HttpError } from "@cellar/shared/errors";
import type { PlatformDeps } from "./deps.ts";

/**
 * Telemetry and analysis reads may go to a streaming replica (`DATABASE_READ_URL`, docs/scaling.md);
 * authorization, configuration and every write stay on the primary. A replica lags by up to its
 * replay delay, so two rules keep answers the ones the primary gives where a client can tell:
 *
 * - Read-your-writes for a session: a session read goes to the replica only when the replica's
 *   row of that session is the primary's (same `activity_seq` and `maturation_count`, read from
 *   both: two primary-key lookups); the materialization is written in the same transaction as
 *   the count, so a transcript's status and maturation right after a maturation (the webhook a
 *   client reacts to) are never behind. Otherwise the whole read is answered by the primary.
 * - A miss is asked again: a read that finds nothing on the replica (404: a trace or span just
 *   written) is answered by the primary.
 * Lists and searches (filtered sessions, traces, issues, findings) read the replica as it is.
 */
export const readPool = (deps: PlatformDeps): postgres.Sql => deps.readSql ?? deps.sql;

type Head = { activity_seq: string; maturation_count: number };
const headOf = (sql: postgres.Sql, serviceId: string, sessionId: string) =>
  sql<
    Head[]
  >`select activity_seq::text, maturation_count from sessions where trace_service_id = ${serviceId} and session_id = ${sessionId}`;

/** The pool a read of this session may use: the replica when it has caught up with the session. */
export async function sessionReadPool(deps: PlatformDeps, serviceId: string, sessionId: string): Promise<postgres.Sql> {
  if (!deps.readSql || deps.readSql === deps.sql) return deps.sql;
  const [[primary], [replica]] = await Promise.all([
    headOf(deps.sql, serviceId, sessionId),
    headOf(deps.readSql, serviceId, sessionId),
  ]);
  const current =
    primary &&
    replica &&
    primary.activity_seq === replica.activity_seq &&
    primary.maturation_count === replica.maturation_count;
  return current ? deps.readSql : deps.sql;
}

/** Runs a read on the replica; a 404 there is asked again of the primary. */
export async function replicaOrPrimary<T>(deps: PlatformDeps, read: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  if (!deps.readSql || deps.readSql === deps.sql) return read(deps.sql);
  try {
    return await read(deps.readSql);
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) return read(deps.sql);
    throw err;
  }
}
