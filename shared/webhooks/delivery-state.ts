import type postgres from "postgres";

/**
 * The one writer of webhook delivery state: `webhook_deliveries` (status, attempts,
 * next_attempt_at), `webhook_attempts`, and each subscription's health (consecutive_failures,
 * failing_since, last_delivery_status, platform-set disabling). Every app that changes them
 * calls a named transition here; policy (when to retry, when to give up) stays with the caller.
 *
 *   insert ──► pending ──recordAttempt──► pending (retry) | delivered | failed | stopped
 *                 ▲                             │
 *                 └──── claimForResend ◄────────┘ (finished rows only; releaseClaim undoes it)
 *   pending ──stop──► stopped (subscription disabled)      pending past the stream ──reconcile──► failed
 *   anything older than the retention ──prune──► deleted (attempts cascade)
 *
 * Beside the status, the attempt claim (`attempt_leased_until`, migration 0041): one attempt of
 * a pending delivery at a time. An attempt is sent only under a claim it took: the fan-out's
 * insert takes it for the first attempt (insert's `leasedUntil`), anything else takes it with
 * claimAttempts, which refuses while another claim is unexpired or the row moved on. A failure
 * record and a manual re-send's claim clear it; releaseLeases gives back one not used. A claim
 * outlives its attempt's send timeout (the dispatcher's lease), so only an attempt outliving its
 * own lease, or a process that died holding one, lets another start: the latter after expiry.
 */

/**
 * A delivery's statuses and which may follow which: the state machine this module owns (the
 * diagram above). Every transition below moves a row along one of these edges and no other
 * (test/webhook-delivery-states.test.ts). The path records only attempts of rows it found
 * pending and claimed (apps/dispatcher/src/attempt.ts), but an attempt that outlived its claim
 * can still overlap the next one, so the records hold the machine themselves: a failure moves
 * only a pending row (a late failure must not send a delivered event again), and a success ends
 * any row in delivered, because the receiver has the event even when the attempt that gave up
 * (failed, stopped) was recorded first.
 */
export const DELIVERY_TRANSITIONS = {
  /** recordSuccesses; recordFailure (pending again: a retry is scheduled); stop,
   * disableSubscriptionAndStop, reconcileOrphans; releaseClaim (back to what it was) */
  pending: ["pending", "delivered", "failed", "stopped"],
  /** claimForResend: a finished delivery back to pending for one manual re-send */
  delivered: ["pending"],
  /** claimForResend; recordSuccesses of an attempt that overlapped the one that gave up */
  failed: ["pending", "delivered"],
  stopped: ["pending", "delivered"],
} as const;
export type DeliveryStatus = keyof typeof DELIVERY_TRANSITIONS;
/** What a failed attempt leaves a pending delivery: retried (pending), failed, or stopped. */
export type StatusAfterFailure = Exclude<(typeof DELIVERY_TRANSITIONS)["pending"][number], "delivered">;
/** Whether `to` may follow `from`. */
export const mayFollow = (from: DeliveryStatus, to: DeliveryStatus): boolean =>
  (DELIVERY_TRANSITIONS[from] as readonly DeliveryStatus[]).includes(to);
type Sql = postgres.Sql | postgres.TransactionSql;

export interface NewDelivery {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_type: string;
  event_key: string;
  body: string;
  enqueued_at: Date;
}

/**
 * Inserts delivery rows, skipping any (subscription, event) pair that already has one: the
 * dedup record that makes a re-selected trace a duplicate rather than a new delivery. Returns
 * the ids actually inserted. `leasedUntil`: the inserted rows come claimed until then for their
 * first attempt (the fan-out, which attempts what it inserted); null leaves them to claimAttempts.
 */
export async function insert(sql: Sql, rows: NewDelivery[], leasedUntil: Date | null = null): Promise<string[]> {
  if (rows.length === 0) return [];
  // unnest keeps one statement text for any batch size (prepared once), unlike multi-row VALUES.
  const col = <K extends keyof NewDelivery>(k: K) => rows.map((r) => r[k]);
  const inserted = await sql<{ id: string }[]>`
    insert into webhook_deliveries (id, tenant_id, subscription_id, event_type, event_key, body, enqueued_at, attempt_leased_until)
    select u.*, ${leasedUntil}::timestamptz from unnest(${col("id")}::text[], ${col("tenant_id")}::uuid[], ${col("subscription_id")}::uuid[], ${col("event_type")}::text[],
      ${col("event_key")}::text[], ${col("body")}::text[], ${rows.map((r) => r.enqueued_at.toISOString())}::timestamptz[]) as u
    on conflict (subscription_id, event_key, tenant_id) do nothing returning id`;
  return inserted.map((r) => r.id);
}

/** One attempt to claim: the delivery, the attempts it had when read, until when, and now. */
export interface AttemptClaim {
  deliveryId: string;
  /** The row's `attempts` as the caller read it: a row that moved on meanwhile is not claimed. */
  attempts: number;
  until: Date;
  now: Date;
}

/** Claimed, or refused with the other claim's end (null: the row is gone, finished or moved on). */
export type ClaimResult = { claimed: true } | { claimed: false; heldUntil: Date | null };

/**
 * Claims attempts of pending deliveries, many in one statement: a row is claimed only while it
 * is pending, still has the attempts the caller read and holds no unexpired claim. A refused
 * claim returns when the other one ends (read from the rows as they were before this statement),
 * so the caller can come back then. Two claims of one delivery in one call: the first is tried.
 */
export async function claimAttempts(sql: Sql, claims: AttemptClaim[]): Promise<ClaimResult[]> {
  const first = new Map<string, AttemptClaim>();
  for (const c of claims) if (!first.has(c.deliveryId)) first.set(c.deliveryId, c);
  const tried = [...first.values()];
  const ids = tried.map((c) => c.deliveryId);
  const rows = await sql<{ id: string; claimed: boolean; leased_until: Date | null }[]>`
    with v as (
      select * from unnest(${ids}::text[], ${tried.map((c) => c.attempts)}::int[],
        ${tried.map((c) => c.until.toISOString())}::timestamptz[], ${tried.map((c) => c.now.toISOString())}::timestamptz[])
        as v(id, attempts, until, now)
    ), c as (
      update webhook_deliveries d set attempt_leased_until = v.until
      from v where d.id = v.id and d.id = any(${ids}::text[]) and d.status = 'pending' and d.attempts = v.attempts
        and (d.attempt_leased_until is null or d.attempt_leased_until <= v.now)
      returning d.id
    )
    -- The rows as they were (a data-modifying CTE's effects are not visible here): a refused
    -- claim's holder and its end.
    select v.id, c.id is not null as claimed,
      case when d.attempt_leased_until > v.now then d.attempt_leased_until end as leased_until
    from v left join c on c.id = v.id left join webhook_deliveries d on d.id = v.id and d.id = any(${ids}::text[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return claims.map((c): ClaimResult => {
    const r = byId.get(c.deliveryId);
    const f = first.get(c.deliveryId)!;
    if (f !== c) return { claimed: false, heldUntil: r?.claimed ? f.until : (r?.leased_until ?? null) };
    return r?.claimed ? { claimed: true } : { claimed: false, heldUntil: r?.leased_until ?? null };
  });
}

/**
 * Gives back claims that were not used (attempts that did not start: a crowded destination's
 * first attempts, handed on), many in one statement: each only if it is still the claim `until`
 * made.
 */
export async function releaseLeases(sql: Sql, leases: Array<{ deliveryId: string; until: Date }>): Promise<void[]> {
  const ids = leases.map((l) => l.deliveryId);
  await sql`
    update webhook_deliveries d set attempt_leased_until = null
    from unnest(${ids}::text[], ${leases.map((l) => l.until.toISOString())}::timestamptz[]) as v(id, until)
    where d.id = v.id and d.id = any(${ids}::text[]) and d.attempt_leased_until = v.until`;
  return leases.map(() => undefined);
}

/** What an attempt needs of a delivery's subscription: where to send, whether to, how to sign. */
export interface SubscriptionTarget {
  subscription_id: string;
  url: string;
  enabled: boolean;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
}

/** Removes a delivery that was never handed to the dispatcher (its job could not be published). */
export async function discardUnsent(sql: Sql, deliveryId: string): Promise<void> {
  await sql`delete from webhook_deliveries where id = ${deliveryId} and attempts = 0`;
}

/**
 * A finished delivery back to pending for one manual re-send. Null when the row is still
 * pending (being attempted) and therefore cannot be claimed; undefined when it does not exist.
 */
export async function claimForResend(
  sql: Sql,
  deliveryId: string,
  subscriptionId: string,
): Promise<{ attempts: number; previousStatus: DeliveryStatus } | null | undefined> {
  const [row] = await sql<
    { status: DeliveryStatus }[]
  >`select status from webhook_deliveries where id = ${deliveryId} and subscription_id = ${subscriptionId}`;
  if (!row) return undefined;
  const [claimed] = await sql<{ attempts: number }[]>`
    update webhook_deliveries set status = 'pending', next_attempt_at = null, attempt_leased_until = null
    where id = ${deliveryId} and subscription_id = ${subscriptionId} and status <> 'pending' returning attempts`;
  return claimed ? { attempts: claimed.attempts, previousStatus: row.status } : null;
}

/** Undoes claimForResend when the re-send could not be queued (else it would look in progress forever). */
export async function releaseClaim(sql: Sql, deliveryId: string, previousStatus: DeliveryStatus): Promise<void> {
  await sql`update webhook_deliveries set status = ${previousStatus} where id = ${deliveryId} and status = 'pending'`;
}

export interface SuccessRecord {
  deliveryId: string;
  subscriptionId: string;
  attempt: number;
  statusCode: number;
  durationMs: number;
  attemptedAt: Date;
}

/**
 * How long after its row's creation a first attempt may start and still be folded into the row
 * (recordSuccesses). The bound is what lets the history (delivery-history.ts) find the newest
 * folded attempts by the row's creation time; later first attempts (a crowded delivery handed to
 * DELIVERIES, a replay after a long outage) get a `webhook_attempts` row like every other.
 */
export const FOLDED_ATTEMPT_WINDOW = "30 seconds";

/**
 * Records successful attempts in one statement for many deliveries (the hot path under load):
 * delivered state, the attempt, and health reset only where health actually changes. A first
 * attempt (FOLDED_ATTEMPT_WINDOW) is kept in the delivery row itself, in the same HOT update that
 * marks it delivered (migration 0035); any later one is a `webhook_attempts` row as before.
 *
 * One pass over the delivery rows: the update decides the fold from the row as it was (SET reads
 * the old values) and returns those old values (Postgres 18's RETURNING OLD), from which the
 * attempts that did not fold are inserted. Reading the rows first and updating them after, as
 * this did before, found each row twice and cost about twice the Postgres time per delivery
 * (docs/performance-journal.md, "Webhooks: the success record in one pass").
 */
export async function recordSuccesses(sql: Sql, recs: SuccessRecord[]): Promise<void[]> {
  const ids = recs.map((r) => r.deliveryId);
  // Whether attempt 1 folds into the row as the row was: no attempt recorded, none folded, and
  // started within the window of the row's creation (FOLDED_ATTEMPT_WINDOW).
  const folds = sql`v.attempt = 1 and d.attempts = 0 and d.first_attempted_at is null
    and d.created_at >= v.attempted_at - ${FOLDED_ATTEMPT_WINDOW}::interval`;
  await sql`
    with v as (
      select * from unnest(${ids}::text[], ${recs.map((r) => r.subscriptionId)}::uuid[], ${recs.map((r) => r.attempt)}::int[],
        ${recs.map((r) => r.statusCode)}::int[], ${recs.map((r) => r.durationMs)}::int[], ${recs.map((r) => r.attemptedAt.toISOString())}::timestamptz[])
        as v(delivery_id, subscription_id, attempt, status_code, duration_ms, attempted_at)
    ), was as (
      -- A delivery deleted meanwhile (its subscription was deleted) has nothing left to record.
      -- The ids once more as an index condition: joined to the unnest alone, the planner reads a
      -- young table whole (its statistics say it is small), 10-70 ms a batch at 30,000 rows.
      update webhook_deliveries d set status = 'delivered', attempts = v.attempt, next_attempt_at = null,
        first_attempt_id = case when ${folds} then uuidv7() else d.first_attempt_id end,
        first_status_code = case when ${folds} then v.status_code else d.first_status_code end,
        first_duration_ms = case when ${folds} then v.duration_ms else d.first_duration_ms end,
        first_attempted_at = case when ${folds} then v.attempted_at else d.first_attempted_at end
      from v where d.id = v.delivery_id and d.id = any(${ids}::text[])
      returning d.id, d.tenant_id, d.created_at, old.attempts, old.first_attempted_at
    ), ins as (
      -- The attempts that did not fold, judged on the rows as they were (was: RETURNING OLD).
      -- An attempt recorded twice is kept once, wherever the first record put it: attempt 1
      -- folded already (first_attempted_at), or kept as a row (the unique key below; a failed
      -- attempt 1 also set attempts = 1 in the same statement).
      insert into webhook_attempts (delivery_id, tenant_id, subscription_id, attempt, status_code, duration_ms, attempted_at)
      select v.delivery_id, was.tenant_id, v.subscription_id, v.attempt, v.status_code, v.duration_ms, v.attempted_at
      from v join was on was.id = v.delivery_id
      where not (v.attempt = 1 and (was.first_attempted_at is not null
        or (was.attempts = 0 and was.created_at >= v.attempted_at - ${FOLDED_ATTEMPT_WINDOW}::interval)))
      on conflict (delivery_id, attempt, tenant_id) do nothing
    )
    update webhook_subscriptions s set consecutive_failures = 0, failing_since = null, last_delivery_status = 'delivered'
    where s.id in (select subscription_id from v)
      and (s.consecutive_failures <> 0 or s.failing_since is not null or s.last_delivery_status is distinct from 'delivered')`;
  return recs.map(() => undefined);
}

export interface FailureRecord {
  deliveryId: string;
  subscriptionId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string;
  attemptedAt: Date;
  /** What the delivery becomes: pending (a retry is scheduled), failed or stopped. */
  status: StatusAfterFailure;
  nextAttemptAt: Date | null;
}

/**
 * A failed attempt: its record, the delivery's new state and the subscription's failure run, in
 * one statement (data-modifying CTEs run atomically). Returns when the failure run began.
 */
export async function recordFailure(sql: Sql, r: FailureRecord): Promise<{ failingSince: Date | null }> {
  const [sub] = await sql<{ failing_since: Date | null }[]>`
    with attempt as (
      -- tenant_id from the delivery (the attempt's key includes it: docs/scaling.md).
      insert into webhook_attempts (delivery_id, tenant_id, subscription_id, attempt, status_code, duration_ms, error, attempted_at)
      select ${r.deliveryId}, d.tenant_id, ${r.subscriptionId}::uuid, ${r.attempt}::int, ${r.statusCode}::int, ${r.durationMs}::int, ${r.error}, ${r.attemptedAt}::timestamptz
      from webhook_deliveries d where d.id = ${r.deliveryId}
      on conflict (delivery_id, attempt, tenant_id) do nothing
    ), delivery as (
      -- Only a pending row moves: an overlapping attempt may have delivered it meanwhile. The
      -- attempt's claim ends with its record: the retry claims again when it comes due.
      update webhook_deliveries set status = ${r.status}, attempts = ${r.attempt}, next_attempt_at = ${r.nextAttemptAt},
        attempt_leased_until = null
      where id = ${r.deliveryId} and status = 'pending'
    )
    update webhook_subscriptions set consecutive_failures = consecutive_failures + 1,
      failing_since = coalesce(failing_since, ${r.attemptedAt}), last_delivery_status = 'failed'
    where id = ${r.subscriptionId} returning failing_since`;
  return { failingSince: sub?.failing_since ?? null };
}

/** A pending delivery that will not be attempted again (its subscription is off). */
export async function stop(sql: Sql, deliveryId: string): Promise<void> {
  await sql`update webhook_deliveries set status = 'stopped', next_attempt_at = null where id = ${deliveryId} and status = 'pending'`;
}

/** The platform disables a subscription (gone, redirect, private address, failing) and stops the delivery. */
export async function disableSubscriptionAndStop(
  sql: Sql,
  subscriptionId: string,
  deliveryId: string,
  reason: string,
  at: Date,
): Promise<void> {
  await sql`
    with sub as (
      update webhook_subscriptions set enabled = false, disabled_reason = ${reason}, updated_at = ${at}
      where id = ${subscriptionId} and enabled
    )
    update webhook_deliveries set status = 'stopped', next_attempt_at = null where id = ${deliveryId} and status = 'pending'`;
}

/** A user's enable: on, and the platform-set failure state cleared. */
export async function enableSubscription(sql: Sql, subscriptionId: string, tenantId: string, at: Date): Promise<void> {
  await sql`update webhook_subscriptions set enabled = true, disabled_reason = null, consecutive_failures = 0,
      failing_since = null, updated_at = ${at}
    where id = ${subscriptionId} and tenant_id = ${tenantId}`;
}

/**
 * Pending deliveries created before `jobsExpireBefore` cannot have a retry job any more (the
 * DELIVERIES stream dropped it at its max age): they are failed, so the history is honest and a
 * manual retry is possible instead of a 409 forever. Returns how many.
 */
export async function reconcileOrphans(sql: Sql, jobsExpireBefore: Date): Promise<number> {
  const rows = await sql`
    update webhook_deliveries set status = 'failed', next_attempt_at = null
    where id in (select id from webhook_deliveries where status = 'pending' and created_at < ${jobsExpireBefore} limit 5000)
    returning 1`;
  return rows.length;
}

/**
 * Deletes deliveries (their attempts cascade) created before `cutoff`. No status filter: the
 * retry curve ends inside the DELIVERIES retention, so anything this old is finished.
 */
export async function prune(sql: Sql, cutoff: Date): Promise<number> {
  let total = 0;
  // Small batches keep each transaction short on a big table.
  for (;;) {
    const rows = await sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries where created_at < ${cutoff} limit 5000)
      returning 1`;
    total += rows.length;
    if (rows.length < 5000) return total;
  }
}
