import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type postgres from "postgres";
import { judge, rowCheck, type ServiceMinute, type TenantBooks, type Verdict } from "@cellar/shared/ledger/books";
import type { Logger } from "@cellar/shared/logger";
import { consumersOf, deadLetterLedgerConsumer, ingestStream } from "@cellar/shared/nats/catalogue";
import { recountAccepted } from "./recount.ts";
import type { ConsumeLoop } from "@cellar/shared/nats/consume";
import type { Topology } from "@cellar/shared/nats/topology";

export interface ReconcileOptions {
  /** How often the books are checked (default 30 s). */
  everyMs?: number;
  /** How far back (default 2 h): minutes older than this are not checked again. */
  windowMs?: number;
  /** Slack after the horizon for counts still in a process's memory (default 10 s: counters flush every 0.5 s). */
  settleMs?: number;
  /**
   * An imbalance is acted on (recounted, recorded, logged, counted in /metrics) only once a later
   * round, at least this long after the first that saw it, still sees it (default 10 s). A count
   * held by a writer while Postgres was away lands within a few seconds of its return; judging
   * before it did raised a false alarm, and a recount taken before it was then added to (issue 41).
   */
  confirmMs?: number;
  /** Every run's verdicts that did not balance (the process's /metrics). */
  onVerdicts?: (unbalanced: Verdict[]) => void;
  now?: () => number;
}

interface Deps {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  options?: ReconcileOptions;
}

const MINUTE = 60_000;
/** One reconciliation at a time across processors (pg_try_advisory_xact_lock). */
const LOCK = 41_0001;
/** An unbalanced tenant is logged at error when found, then at most this often while it stays so. */
const RELOG_MS = 10 * MINUTE;

/**
 * The instant before which nothing accepted can still be in flight: the time of the oldest
 * message any INGEST consumer has not acknowledged (its ack floor's next), and the receipt of the
 * oldest INGEST dead letter the ledger has not counted yet, else now. Null when JetStream cannot
 * say (nothing counts as settled then).
 */
export async function settledHorizon(jsm: JetStreamManager, t: Topology, now: number): Promise<number | null> {
  // Every INGEST consumer: the tenant lanes and the one of subjects without a lane.
  let horizon = now;
  for (const { durable } of consumersOf(ingestStream, t)) {
    const c = await jsm.consumers.info(t.ingestStream, durable);
    if (c.num_pending + c.num_ack_pending === 0) continue;
    // The ack floor's next stream sequence: this lane's oldest unacknowledged message or an older one.
    const m = await jsm.streams.getMessage(t.ingestStream, { seq: c.ack_floor.stream_seq + 1 }).catch(() => null);
    if (!m) return null;
    horizon = Math.min(horizon, m.time.getTime());
  }
  // A dead letter not counted yet (processor-ledger on DEAD_LETTERS) holds back the minute its
  // item was received: it is counted there (dead-letters.ts), after INGEST's ack.
  const dl = await jsm.consumers.info(t.deadLetterStream, deadLetterLedgerConsumer.consumer!.durable);
  if (dl.num_pending + dl.num_ack_pending > 0) {
    const m = await jsm.streams
      .getMessage(t.deadLetterStream, {
        seq: dl.ack_floor.stream_seq + 1,
        next_by_subj: dl.config.filter_subject,
      } as { seq: number })
      .catch(() => null);
    if (!m) return null;
    let received = Number.NaN;
    try {
      received = Date.parse((m.json() as { receivedAt?: string }).receivedAt ?? "");
    } catch {}
    horizon = Math.min(horizon, Number.isFinite(received) ? received : m.time.getTime());
  }
  return horizon;
}

/** The minutes of a tenant where more was stored or dead-lettered than ingest counted accepted. */
async function shortMinutes(
  sql: postgres.Sql | postgres.TransactionSql,
  tenantId: string,
  from: Date,
  to: Date,
): Promise<number[]> {
  const rows = await sql<{ minute: Date }[]>`
    select minute from ledger_counts
    where tenant_id = ${tenantId} and minute >= ${from} and minute < ${to} and stage in ('accepted', 'stored', 'dead_lettered', 'replayed')
    group by minute
    having sum(case stage when 'accepted' then count when 'replayed' then count else -count end) < 0
    order by minute limit 10`;
  return rows.map((r) => new Date(r.minute).getTime());
}

/** Each tenant's settled totals in [from, to) and its trace rows received then (one statement each). */
export async function readBooks(
  sql: postgres.Sql | postgres.TransactionSql,
  from: Date,
  to: Date,
): Promise<TenantBooks[]> {
  const [counts, perMinute, rows] = await Promise.all([
    sql<{ tenant_id: string; stage: string; reason: string; n: string }[]>`
      select tenant_id, stage, case when stage = 'stored' and reason = 'trace' then 'trace' else '' end as reason, sum(count)::text as n
      from ledger_counts
      where minute >= ${from} and minute < ${to} and stage in ('accepted', 'stored', 'dead_lettered', 'replayed')
      group by 1, 2, 3`,
    // Which minutes of each service the ledger counted anything in, and its stored traces there:
    // rows of a service before the ledger counted it are not compared (rowCheck, docs/ledger.md).
    sql<{ tenant_id: string; service_name: string; minute: Date; n: string }[]>`
      select tenant_id, service_name, minute, sum(case when stage = 'stored' and reason = 'trace' then count else 0 end)::text as n
      from ledger_counts
      where minute >= ${from} and minute < ${to}
      group by 1, 2, 3`,
    // Trace ids are time-ordered (uuidv7, migration 0027) and written after receipt: the id range
    // keeps this to the window's rows (the primary key), not a scan of every trace. The upper
    // bound (now, with the same 10 minutes for clocks) matters on an install upgraded from before
    // 0027: its older rows' random ids sort above any current uuidv7 almost always, and with a
    // lower bound alone every reconciliation read all of them (a 12 s parallel scan at 3 million).
    sql<{ tenant_id: string; service_name: string; minute: Date; n: string }[]>`
      select t.tenant_id, s.name as service_name, date_trunc('minute', t.received_at) as minute, count(*)::text as n
      from traces t join trace_services s on s.id = t.trace_service_id and s.tenant_id = t.tenant_id
      where t.id >= ${uuidv7Floor(from.getTime() - 10 * MINUTE)}::uuid and t.id < ${uuidv7Floor(Date.now() + 10 * MINUTE)}::uuid
        and t.received_at >= ${from} and t.received_at < ${to}
      group by 1, 2, 3`,
  ]);
  const books = new Map<string, TenantBooks>();
  const of = (tenantId: string) => {
    let b = books.get(tenantId);
    if (!b) {
      b = {
        tenantId,
        settled: { accepted: 0, stored: 0, deadLettered: 0, replayed: 0 },
        storedTraces: 0,
        traceRows: 0,
      };
      books.set(tenantId, b);
    }
    return b;
  };
  for (const r of counts) {
    const b = of(r.tenant_id);
    const n = Number(r.n);
    if (r.stage === "accepted") b.settled.accepted += n;
    else if (r.stage === "stored") {
      b.settled.stored += n;
      if (r.reason === "trace") b.storedTraces += n;
    } else if (r.stage === "dead_lettered") b.settled.deadLettered += n;
    else if (r.stage === "replayed") b.settled.replayed += n;
  }
  const minutes = new Map<string, Map<string, ServiceMinute>>();
  const minuteOf = (tenantId: string, serviceName: string, minute: Date) => {
    let t = minutes.get(tenantId);
    if (!t) minutes.set(tenantId, (t = new Map()));
    const at = new Date(minute).getTime();
    const k = `${serviceName}\u0000${at}`;
    let m = t.get(k);
    if (!m) t.set(k, (m = { serviceName, minute: at, storedTraces: 0, traceRows: 0, counted: false }));
    return m;
  };
  for (const r of perMinute) {
    const m = minuteOf(r.tenant_id, r.service_name, r.minute);
    m.counted = true;
    m.storedTraces += Number(r.n);
  }
  for (const r of rows) minuteOf(r.tenant_id, r.service_name, r.minute).traceRows += Number(r.n);
  for (const [tenantId, t] of minutes) {
    const check = rowCheck([...t.values()]);
    const b = of(tenantId);
    b.traceRows = check.traceRows;
    if (check.uncounted) b.uncountedRows = check.uncounted;
  }
  return [...books.values()];
}

/** The smallest UUID version 7 of a millisecond. */
export function uuidv7Floor(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-7000-8000-000000000000`;
}

/**
 * Checks every tenant's books over the settled minutes of the window, records each verdict in
 * ledger_checks (what the API and the dashboard show) and says loudly when one does not balance:
 * an error log, the metric, the dashboard's banner (docs/ledger.md, "Reconciliation").
 */
export interface ReconcileState {
  /** When each unbalanced tenant was last logged at error. */
  logged: Map<string, number>;
  /** When each tenant was first seen unbalanced, not yet confirmed by a later round. */
  suspect: Map<string, number>;
}

/**
 * One round. Without `state` (a one-off check, tests) every verdict counts at once; the running
 * loop passes its state, so an imbalance counts only when a later round confirms it (confirmMs).
 */
export async function reconcileOnce(deps: Deps, state?: ReconcileState): Promise<Verdict[] | null> {
  const logged = state?.logged ?? new Map<string, number>();
  const o = deps.options ?? {};
  const now = o.now?.() ?? Date.now();
  const jsm = await deps.js.jetstreamManager(false);
  const horizon = await settledHorizon(jsm, deps.topology, now);
  if (horizon === null) return null;
  const to = new Date(Math.floor((Math.min(horizon, now) - (o.settleMs ?? 10_000)) / MINUTE) * MINUTE);
  const from = new Date(Math.floor((now - (o.windowMs ?? 2 * 60 * MINUTE)) / MINUTE) * MINUTE);
  if (to <= from) return null;
  return deps.sql.begin(async (tx) => {
    const [{ locked }] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${LOCK}) as locked`;
    if (!locked) return null;
    let verdicts = (await readBooks(tx, from, to)).map((b) => judge(b));
    if (state) {
      // Seen unbalanced for the first time: wait for a later round before acting on it.
      const confirmMs = o.confirmMs ?? 10_000;
      const unbalanced = new Set(verdicts.filter((v) => !v.balanced).map((v) => v.tenantId));
      for (const id of [...state.suspect.keys()]) if (!unbalanced.has(id)) state.suspect.delete(id);
      const unconfirmed = new Set(
        verdicts
          .filter((v) => !v.balanced)
          .filter((v) => {
            const since = state.suspect.get(v.tenantId);
            if (since === undefined) state.suspect.set(v.tenantId, now);
            return since === undefined || now - since < confirmMs;
          })
          .map((v) => v.tenantId),
      );
      verdicts = verdicts.filter((v) => !unconfirmed.has(v.tenantId));
    }
    // Fewer accepted than settled: an ingest process was killed holding counts. INGEST has them.
    for (const v of verdicts.filter((v) => v.unaccounted < 0)) {
      const added = await recountAccepted(
        tx,
        jsm,
        deps.topology,
        v.tenantId,
        await shortMinutes(tx, v.tenantId, from, to),
      );
      if (added)
        deps.logger.warn(
          "ledger: accepted recounted from INGEST (an ingest process stopped without writing its counts)",
          { tenant: v.tenantId, added },
        );
    }
    // Accepted is now what INGEST holds (with a door; an item without one is counted accepted by
    // the processor that settles it); the rest was counted twice (a duplicate copy delivered
    // again), not lost. Stored cannot be: it is counted with the rows, in the write's transaction;
    // nor a dead letter: it is counted once per original message (issue 41).
    const confirmed = new Set(verdicts.filter((v) => v.unaccounted < 0).map((v) => v.tenantId));
    if (confirmed.size) {
      const again = new Map(
        (await readBooks(tx, from, to))
          .filter((b) => confirmed.has(b.tenantId))
          .map((b) => [b.tenantId, judge(b, { acceptedConfirmed: true })]),
      );
      verdicts = verdicts.map((v) => again.get(v.tenantId) ?? v);
      for (const v of again.values()) {
        if (v.redelivered && logged.get(`redelivered:${v.tenantId}`) !== v.redelivered) {
          logged.set(`redelivered:${v.tenantId}`, v.redelivered);
          deps.logger.warn("ledger: items counted twice (a duplicate copy delivered again); not a loss", {
            tenant: v.tenantId,
            redelivered: v.redelivered,
          });
        }
      }
    }
    if (verdicts.length === 0) return verdicts;
    const rows = verdicts.map((v) => ({
      tenant_id: v.tenantId,
      balanced: v.balanced,
      details: {
        from: from.toISOString(),
        to: to.toISOString(),
        unaccounted: v.unaccounted,
        missingTraceRows: v.missingTraceRows,
        ...(v.uncountedRows ? { uncountedRows: v.uncountedRows } : {}),
        ...(v.redelivered ? { redelivered: v.redelivered } : {}),
        problems: v.problems,
      },
    }));
    await tx`
      insert into ledger_checks (tenant_id, checked_at, balanced, unbalanced_since, details)
      select x.tenant_id, now(), x.balanced, case when x.balanced then null else now() end, x.details
      from json_to_recordset(${tx.json(rows as any)}::json) as x(tenant_id uuid, balanced boolean, details jsonb)
      join tenants t on t.id = x.tenant_id
      order by x.tenant_id
      on conflict (tenant_id) do update set checked_at = excluded.checked_at, balanced = excluded.balanced, details = excluded.details,
        unbalanced_since = case when excluded.balanced then null else coalesce(ledger_checks.unbalanced_since, excluded.checked_at) end`;
    for (const v of verdicts) {
      if (v.balanced) {
        logged.delete(v.tenantId);
        continue;
      }
      if (now - (logged.get(v.tenantId) ?? 0) < RELOG_MS) continue;
      logged.set(v.tenantId, now);
      deps.logger.error("ledger does not balance", {
        tenant: v.tenantId,
        from: from.toISOString(),
        to: to.toISOString(),
        unaccounted: v.unaccounted,
        missingTraceRows: v.missingTraceRows,
        problems: v.problems,
      });
    }
    return verdicts;
  });
}

/** Runs reconcileOnce every `everyMs` (and prunes counts older than 31 days once an hour). */
export function startReconciliation(deps: Deps): ConsumeLoop {
  const o = deps.options ?? {};
  const state: ReconcileState = { logged: new Map(), suspect: new Map() };
  let lastPrune = 0;
  let running: Promise<unknown> = Promise.resolve();
  const run = async () => {
    try {
      const verdicts = await reconcileOnce(deps, state);
      if (verdicts) o.onVerdicts?.(verdicts.filter((v) => !v.balanced));
      if (Date.now() - lastPrune > 60 * MINUTE) {
        lastPrune = Date.now();
        await deps.sql`delete from ledger_counts where minute < now() - interval '31 days'`;
        // The keys of dead letters counted (dead-letters.ts): DEAD_LETTERS keeps a message 30 days.
        await deps.sql`delete from ledger_dead_letters where counted_at < now() - interval '31 days'`;
      }
    } catch (err) {
      deps.logger.warn("ledger reconciliation failed; trying again next round", { err: err as Error });
    }
  };
  const timer = setInterval(() => {
    running = run();
  }, o.everyMs ?? 30_000);
  (timer as { unref?: () => void }).unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
