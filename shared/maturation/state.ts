import type postgres from "postgres";

/**
 * The one writer of a session's and a trace's maturation state (docs/maturation.md): the
 * columns `status`, `maturation_count`, `matured_at`, `published_count` of sessions, a session's
 * failure bookkeeping `maturation_failures`, `maturation_retry_at`, `maturation_failed_at`,
 * `maturation_error`, a trace's `pending_traces` row (trace rows are never updated: migration
 * 0016), plus removing the rows (delete, retention). Every app calls a named transition here;
 * policy (when a failing session is parked, how long it backs off) stays with the caller.
 * test/maturation-state-owner.test.ts fails if SQL writing these columns or that table, or
 * spelling out "parked", appears anywhere else.
 *
 *   (insert: active, count 0) ──mature──► matured (count + 1) ──recordPublished──► published = count
 *        ▲                                   │
 *        └────────── reopen (new rows) ◄─────┘
 *   active ──recordFailure──► backing off (retry_at) ── ... ──park──► parked
 *   parked ──reopen (new activity) | unpark (operator)──► active, the count of failures restarts
 *   any ──deleteSession──► gone        matured and idle past the retention ──expire*──► gone
 *
 * A trace: openTraces (pending row, matured_at null) ──matureTraces──► matured_at set (publish
 * owed) ──recordPublished──► row deleted (matured, published). Its maturation time is
 * `trace_analyses.computed_at`, written in the same transaction with the same now().
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
): Promise<Array<{ id: string; tenant_id: string }>> {
  if (rows.length === 0) return [];
  return tx<{ id: string; tenant_id: string }[]>`
    with x as (select * from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(pk uuid, first timestamptz, last timestamptz)),
      locked as (select s.id from sessions s join x on s.id = x.pk order by s.id for no key update of s)
    update sessions s set status = 'active', last_ingested_at = now(), activity_seq = s.activity_seq + 1,
      first_activity_at = least(s.first_activity_at, x.first), last_activity_at = greatest(s.last_activity_at, x.last)
    from x where s.id = x.pk and s.id in (select id from locked)
    returning s.id, s.tenant_id`;
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

/**
 * A trace's pending row, found through the trace's own `ingested_at` (the key's first column),
 * for a `traces t` in the query. The one spelling of the join.
 */
export const PENDING_OF_TRACE = "p.ingested_at = t.ingested_at and p.trace_pk = t.id";
/** Over `traces tr`: whether the trace is still active (its pending row not yet matured). */
const TRACE_ACTIVE_SQL =
  "exists (select 1 from pending_traces p where p.ingested_at = tr.ingested_at and p.trace_pk = tr.id and p.matured_at is null)";
/** Over `traces tr`: its status as the platform answers it. */
export const TRACE_STATUS_SQL = `(case when ${TRACE_ACTIVE_SQL} then 'active' else 'matured' end)`;
/**
 * Over `traces tr left join trace_analyses ta`: its maturation time. The analysis is written
 * once, at maturation, with the same now() that set `traces.matured_at` before migration 0016.
 */
export const TRACE_MATURED_AT_SQL = "ta.computed_at";

/**
 * New traces, just inserted by the write (same transaction): pending and active, with what each
 * contributes to its own analysis (`contribution`, JSON text; migration 0028), kept until its claim.
 */
export async function openTraces(
  tx: Sql,
  rows: Array<{ trace_pk: string; tenant_id: string; contribution?: string | null }>,
): Promise<void> {
  if (rows.length === 0) return;
  // now() is the transaction time: the traces' own ingested_at.
  await tx`
    insert into pending_traces (ingested_at, trace_pk, tenant_id, contribution)
    select now(), x.trace_pk, x.tenant_id, x.contribution
    from unnest(${tx.array(rows.map((r) => r.trace_pk))}::uuid[], ${tx.array(rows.map((r) => r.tenant_id))}::uuid[],
      ${tx.array(rows.map((r) => r.contribution ?? null))}::text[]) as x(trace_pk, tenant_id, contribution)`;
}

/** Of these traces (by service and trace id), the ones still active (replayed writes refresh their keys). */
export async function stillActiveTraces(
  tx: Sql,
  keys: Array<{ s: string; id: string }>,
): Promise<Array<{ id: string; tenant_id: string }>> {
  if (keys.length === 0) return [];
  return tx<{ id: string; tenant_id: string }[]>`
    select t.id, t.tenant_id from traces t join jsonb_to_recordset(${tx.json(keys as any)}::jsonb) as x(s uuid, id text)
      on t.trace_service_id = x.s and t.trace_id = x.id
    where exists (select 1 from pending_traces p where ${tx.unsafe(PENDING_OF_TRACE)} and p.matured_at is null)`;
}

/**
 * Traces inserted by the write whose transaction time is `micros` µs since the epoch (a batch
 * key) and still pending: active, or matured with the publish owed (a crash after the commit:
 * the marker's redelivery publishes it, not only the sweep later).
 */
export async function tracesOfBatch(
  sql: Sql,
  micros: string,
  /** Only the traces of these tenants (a batch key of one tenant lane); default all. */
  ofTenant?: (tenantId: string) => boolean,
): Promise<string[]> {
  const rows = await sql<{ id: string; tenant_id: string }[]>`
    select trace_pk as id, tenant_id from pending_traces
    where ingested_at = timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond'`;
  return rows.filter((r) => !ofTenant || ofTenant(r.tenant_id)).map((r) => r.id);
}

/** Active traces ingested longer than `idleForSeconds` ago (the sweep's candidates, oldest first). */
export function traceSweepCandidates(sql: Sql, idleForSeconds: number, limit: number): Promise<Array<{ id: string }>> {
  return sql<{ id: string }[]>`
    select trace_pk as id from pending_traces where ingested_at < now() - make_interval(secs => ${idleForSeconds}) and matured_at is null
    order by ingested_at limit ${limit}`;
}

/**
 * Pending rows whose trace is gone (its session deleted or expired while it was pending): no
 * foreign key removes them. Only rows older than `olderThanSeconds` (a trace is never younger
 * than its row). Returns how many went.
 */
export async function prunePendingTraces(sql: Sql, olderThanSeconds: number, limit: number): Promise<number> {
  return (
    await sql`
      with gone as (
        select p.ingested_at, p.trace_pk from pending_traces p
        where p.ingested_at < now() - make_interval(secs => ${olderThanSeconds})
          and not exists (select 1 from traces t where t.id = p.trace_pk)
        limit ${limit})
      delete from pending_traces p using gone where p.ingested_at = gone.ingested_at and p.trace_pk = gone.trace_pk`
  ).count;
}

/** A trace claimed by matureTraces: `ingested_key` is its pending row's `ingested_at` as text (exact to the microsecond, which a JS Date is not). */
export interface ClaimedTrace {
  trace_pk: string;
  ingested_key: string;
  matured_at: Date;
}

/**
 * Traces matured, once (count 1): of the pending rows `keys` (a trace's pk and its own
 * `ingested_at` as text, read with the trace), those still active and idle for the window,
 * claimed in one statement, by the pending rows' own key: no trace row is read. The rows are
 * locked in trace id order (no deadlock with another processor claiming an overlapping set); a
 * row another transaction matured first no longer matches `matured_at is null` once that one
 * commits, and is left out. The rest (still active, matured before, gone) are for the caller to
 * look up.
 *
 * `withClaimed`: a data-modifying statement run in the same statement over the claimed rows, as
 * CTE `m` (trace_pk, ingested_at, matured_at): the analyses' insert, so claim and analysis commit
 * together without a transaction's extra round trips (one statement is atomic by itself).
 */
export function matureTraces(
  tx: Sql,
  keys: Array<{ pk: string; ingestedKey: string }>,
  windowSeconds: number,
  withClaimed?: postgres.PendingQuery<postgres.Row[]>,
): Promise<ClaimedTrace[]> {
  return tx<ClaimedTrace[]>`
    with l as (
      select p.ingested_at, p.trace_pk from pending_traces p
        join unnest(${tx.array(keys.map((k) => k.ingestedKey))}::timestamptz[], ${tx.array(keys.map((k) => k.pk))}::uuid[])
          as k(ingested_at, trace_pk) on p.ingested_at = k.ingested_at and p.trace_pk = k.trace_pk
      where p.matured_at is null and p.ingested_at <= now() - make_interval(secs => ${windowSeconds})
      order by p.trace_pk for update of p),
    m as (
      update pending_traces p set matured_at = now(), contribution = null from l
      where p.ingested_at = l.ingested_at and p.trace_pk = l.trace_pk
      returning p.trace_pk, p.ingested_at, p.matured_at)
    ${withClaimed ? tx`, written as (${withClaimed})` : tx``}
    select m.trace_pk, m.ingested_at::text as ingested_key, m.matured_at from m order by m.trace_pk`;
}

/**
 * MATURED messages published: `published_count` moves up to each session's highest published
 * count (one row per session: an UPDATE joined to two rows of the same target applies only one
 * of them, unpredictably), a trace's pending row goes. Rows locked in id order, like the maturation
 * transactions (no deadlock with them).
 */
export async function recordPublished(
  sql: Sql,
  sessions: Array<{ pk: string; count: number }>,
  traces: Array<{ pk: string; ingestedKey?: string }>,
): Promise<void> {
  if (sessions.length) {
    await sql`
      with x as (select * from jsonb_to_recordset(${sql.json(sessions as any)}::jsonb) as x(pk uuid, count int)),
        locked as (select s.id from sessions s join x on s.id = x.pk order by s.id for no key update of s)
      update sessions s set published_count = greatest(s.published_count, x.count) from x where s.id = x.pk and s.id in (select id from locked)`;
  }
  // A trace whose pending key the caller knows goes by that key; any other is found through its trace row.
  const keyed = traces.filter((t) => t.ingestedKey);
  if (keyed.length) {
    await sql`
      with locked as (
        select p.ingested_at, p.trace_pk from pending_traces p
          join unnest(${sql.array(keyed.map((t) => t.ingestedKey!))}::timestamptz[], ${sql.array(keyed.map((t) => t.pk))}::uuid[]) as x(ingested_at, trace_pk)
          on p.ingested_at = x.ingested_at and p.trace_pk = x.trace_pk
        where p.matured_at is not null order by p.trace_pk for update of p)
      delete from pending_traces p using locked where p.ingested_at = locked.ingested_at and p.trace_pk = locked.trace_pk`;
  }
  const unkeyed = traces.filter((t) => !t.ingestedKey).map((t) => t.pk);
  if (unkeyed.length) {
    await sql`
      with locked as (
        select p.ingested_at, p.trace_pk from pending_traces p join traces t on ${sql.unsafe(PENDING_OF_TRACE)}
        where t.id = any(${sql.array(unkeyed)}::uuid[]) and p.matured_at is not null order by p.trace_pk for update of p)
      delete from pending_traces p using locked where p.ingested_at = locked.ingested_at and p.trace_pk = locked.trace_pk`;
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

/** Removes one session and, through its foreign keys, everything stored under it (and its traces' pending rows). */
export async function deleteSession(tx: Sql, sessionPk: string): Promise<void> {
  await tx`delete from pending_traces p using traces t where t.session_pk = ${sessionPk} and ${tx.unsafe(PENDING_OF_TRACE)}`;
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

/**
 * Retention inside a session that lives on: up to `limit` of its matured traces ingested before
 * `cutoff` (a publish still owed goes with its trace, as before migration 0016; the sweep prunes
 * the pending row).
 */
export async function expireTraces(sql: Sql, sessionPks: string[], cutoff: Date, limit: number): Promise<number> {
  return (
    await sql`
      with doomed as (
        select t.id from traces t where t.session_pk = any(${sessionPks}::uuid[]) and t.ingested_at < ${cutoff}
          and not exists (select 1 from pending_traces p where ${sql.unsafe(PENDING_OF_TRACE)} and p.matured_at is null)
        limit ${limit} for update skip locked)
      delete from traces t using doomed where t.id = doomed.id`
  ).count;
}
