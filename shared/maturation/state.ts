import type postgres from "postgres";

/**
 * The one writer of a session's and a trace's maturation state (docs/maturation.md): the
 * columns `status`, `maturation_count`, `matured_at`, `published_count` of sessions and traces,
 * and a session's failure bookkeeping `maturation_failures`, `maturation_retry_at`,
 * `maturation_failed_at`, `maturation_error`, plus removing the rows (delete, retention). Every
 * app calls a named transition here; policy (when a failing session is parked, how long it
 * backs off) stays with the caller. test/maturation-state-owner.test.ts fails if SQL writing
 * these columns, or spelling out "parked", appears anywhere else.
 *
 *   (insert: active, count 0) ──mature──► matured (count + 1) ──recordPublished──► published = count
 *        ▲                                   │
 *        └────────── reopen (new rows) ◄─────┘
 *   active ──recordFailure──► backing off (retry_at) ── ... ──park──► parked
 *   parked ──reopen (new activity) | unpark (operator)──► active, the count of failures restarts
 *   any ──deleteSession──► gone        matured and idle past the retention ──expire*──► gone
 */

type Sql = postgres.Sql | postgres.TransactionSql;

/**
 * A session is parked when its attempts ran out and no activity came since. The one spelling of
 * it, over a `sessions` row whose columns are unambiguous in the query (raw SQL: also read by
 * the admin CLI through drizzle).
 */
export const PARKED_SQL = "(maturation_failed_at is not null and last_ingested_at <= maturation_failed_at)";
/** PARKED_SQL as a postgres.js fragment. */
export const parked = (sql: Sql) => sql.unsafe(PARKED_SQL);

/**
 * Sessions that got really-new rows: (re)opened, their activity clocks moved. Rows locked in id
 * order, as maturation locks them, and FOR NO KEY UPDATE (as maturation): the trace inserts took
 * FOR KEY SHARE on these sessions (the foreign key check), which FOR UPDATE conflicts with, so
 * two writes, or a write and a maturation, holding key-share locks on each other's sessions
 * deadlocked under load (bench/e2e.ts, lag above the window). New activity also un-parks a
 * parked session (PARKED_SQL compares against last_ingested_at). Returns the reopened ids.
 */
export async function reopen(
  tx: Sql,
  rows: Array<{ pk: string; first: string; last: string }>,
): Promise<Array<{ id: string }>> {
  if (rows.length === 0) return [];
  return tx<{ id: string }[]>`
    with x as (select * from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(pk uuid, first timestamptz, last timestamptz)),
      locked as (select s.id from sessions s join x on s.id = x.pk order by s.id for no key update of s)
    update sessions s set status = 'active', last_ingested_at = now(), activity_seq = s.activity_seq + 1,
      first_activity_at = least(s.first_activity_at, x.first), last_activity_at = greatest(s.last_activity_at, x.last)
    from x where s.id = x.pk and s.id in (select id from locked)
    returning s.id`;
}

/**
 * Webhook delivery history, and with it the dedup record, is kept 30 days; a maturation after
 * that restarts the count at 1 (contract: Delivery rules 7). The new event stays distinct from
 * the old one because maturationKey() carries the maturation time.
 */
export const COUNT_RESTART_AFTER = "30 days";

export interface MaturedRow {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  session_id: string;
  status: "active" | "matured";
  maturation_count: number;
  matured_at: Date | null;
}

/** Sessions (locked by the caller) matured: count + 1 (or 1 after 30 days), failures cleared. */
export function matureSessions(tx: Sql, ids: string[]): Promise<MaturedRow[]> {
  return tx<MaturedRow[]>`
    update sessions set status = 'matured', matured_at = now(),
      maturation_count = case when matured_at < now() - ${COUNT_RESTART_AFTER}::interval then 1 else maturation_count + 1 end,
      published_count = case when matured_at < now() - ${COUNT_RESTART_AFTER}::interval then 0 else published_count end,
      maturation_failures = 0, maturation_retry_at = null, maturation_failed_at = null, maturation_error = null
    where id = any(${tx.array(ids)}::uuid[])
    returning id, tenant_id, trace_service_id, session_id, status, maturation_count, matured_at`;
}

/** Traces (locked by the caller) matured, once: count 1. */
export function matureTraces(tx: Sql, ids: string[]): Promise<Array<MaturedRow & { trace_id: string }>> {
  return tx<Array<MaturedRow & { trace_id: string }>>`
    update traces set status = 'matured', maturation_count = 1, matured_at = now() where id = any(${tx.array(ids)}::uuid[])
    returning id, tenant_id, trace_service_id, trace_id, session_id, status, maturation_count, matured_at`;
}

/**
 * MATURED messages published: `published_count` moves up to each session's highest published
 * count (one row per session: an UPDATE joined to two rows of the same target applies only one
 * of them, unpredictably), traces to 1. Rows locked in id order, like the maturation
 * transactions (no deadlock with them).
 */
export async function recordPublished(
  sql: Sql,
  sessions: Array<{ pk: string; count: number }>,
  tracePks: string[],
): Promise<void> {
  if (sessions.length) {
    await sql`
      with x as (select * from jsonb_to_recordset(${sql.json(sessions as any)}::jsonb) as x(pk uuid, count int)),
        locked as (select s.id from sessions s join x on s.id = x.pk order by s.id for no key update of s)
      update sessions s set published_count = greatest(s.published_count, x.count) from x where s.id = x.pk and s.id in (select id from locked)`;
  }
  if (tracePks.length) {
    await sql`
      with locked as (select id from traces where id = any(${sql.array(tracePks)}::uuid[]) order by id for update)
      update traces set published_count = 1 where id in (select id from locked)`;
  }
}

/**
 * One more failed maturation of a session, in its own statement (the failed transaction rolled
 * back): the count (restarting at 1 when new activity came after it was parked) and the error.
 * Returns the attempts so far, or null when the session is gone.
 */
export async function recordFailure(sql: Sql, sessionPk: string, error: string): Promise<number | null> {
  const [row] = await sql<{ failures: number }[]>`
    update sessions set
      maturation_failures = case when maturation_failed_at is not null and not ${parked(sql)} then 1 else maturation_failures + 1 end,
      maturation_error = ${error}
    where id = ${sessionPk} returning maturation_failures as failures`;
  return row ? row.failures : null;
}

/** After a failure: retried at `retryAt` (the marker naked, the sweep skips it until then). */
export async function backOff(sql: Sql, sessionPk: string, retryAt: Date): Promise<void> {
  await sql`update sessions set maturation_retry_at = ${retryAt}, maturation_failed_at = null where id = ${sessionPk}`;
}

/** After the last allowed failure: parked until new activity or an operator's unpark. */
export async function park(sql: Sql, sessionPk: string): Promise<void> {
  await sql`update sessions set maturation_retry_at = null, maturation_failed_at = now() where id = ${sessionPk}`;
}

/** An operator's retry of a failed session: the next sweep (or marker) tries again from a fresh count. */
export async function unpark(sql: Sql, sessionPk: string): Promise<{ id: string; session_id: string } | undefined> {
  const [row] = await sql<{ id: string; session_id: string }[]>`
    update sessions set maturation_failures = 0, maturation_retry_at = null, maturation_failed_at = null
    where id = ${sessionPk} and maturation_error is not null returning id, session_id`;
  return row;
}

/**
 * Active sessions idle longer than `idleForSeconds` that may be matured now: not backing off,
 * not parked (the sweep's candidates, oldest first).
 */
export function sweepCandidates(sql: Sql, idleForSeconds: number, limit: number): Promise<Array<{ id: string }>> {
  return sql<{ id: string }[]>`
    select id from sessions where status = 'active' and last_ingested_at < now() - make_interval(secs => ${idleForSeconds})
      and (maturation_retry_at is null or maturation_retry_at <= now())
      and not ${parked(sql)}
    order by last_ingested_at limit ${limit}`;
}

/** Removes one session and, through its foreign keys, everything stored under it. */
export async function deleteSession(tx: Sql, sessionPk: string): Promise<void> {
  await tx`delete from sessions where id = ${sessionPk}`;
}

/**
 * Retention: up to `limit` matured sessions of a tenant idle since before `cutoff` removed
 * (cascading), rows another transaction holds skipped. Returns how many went.
 */
export async function expireSessions(sql: Sql, tenantId: string, cutoff: Date, limit: number): Promise<number> {
  return (
    await sql`
      with doomed as (
        select id from sessions where status = 'matured' and last_ingested_at < ${cutoff} and tenant_id = ${tenantId}
        limit ${limit} for update skip locked)
      delete from sessions s using doomed where s.id = doomed.id`
  ).count;
}

/** Retention inside a session that lives on: up to `limit` of its matured traces ingested before `cutoff`. */
export async function expireTraces(sql: Sql, sessionPks: string[], cutoff: Date, limit: number): Promise<number> {
  return (
    await sql`
      with doomed as (
        select id from traces where session_pk = any(${sessionPks}::uuid[]) and ingested_at < ${cutoff} and status = 'matured'
        limit ${limit} for update skip locked)
      delete from traces t using doomed where t.id = doomed.id`
  ).count;
}
