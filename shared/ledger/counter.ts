import type postgres from "postgres";
import type { Logger } from "../logger.ts";
import { type LedgerReport, type LedgerStage, minuteOf, SDK_COUNTERS } from "./model.ts";
import { type CountRow, upsertCounts } from "./upsert.ts";

/**
 * A process's ledger counts, kept in memory and written in one upsert per flush (every
 * `flushEveryMs`, and at stop): the hot path only adds to a map, never runs a statement.
 * A flush that fails keeps its counts for the next one. What a process held when it was killed
 * (not stopped) is lost: at most one flush interval (docs/ledger.md, "What can be off").
 */
export interface LedgerCounter {
  /** Adds `n` items to a stage; `at` (epoch ms, default now) picks the minute. */
  add(tenantId: string, serviceName: string, stage: LedgerStage, reason: string, n: number, at?: number): void;
  /** An SDK instance's cumulative counters (readLedgerReport): only what grew since its last report counts. */
  sdkReport(tenantId: string, serviceName: string, report: LedgerReport): void;
  /** Counts another statement already wrote (the ingest writer's `stored`, in its transaction): only observed (/metrics). */
  counted(stage: LedgerStage, reason: string, n: number): void;
  flush(): Promise<void>;
  /** Stops the timer and writes what is held. */
  stop(): Promise<void>;
}

export interface LedgerCounterDeps {
  sql: postgres.Sql;
  logger: Logger;
  flushEveryMs?: number;
  now?: () => number;
  /** Every count as it is added (the process's /metrics). */
  observe?: (stage: LedgerStage, reason: string, n: number) => void;
}

type Report = { tenantId: string; serviceName: string; report: LedgerReport };

const SEP = "\u0000";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createLedgerCounter(deps: LedgerCounterDeps): LedgerCounter {
  const now = deps.now ?? Date.now;
  let held = new Map<string, number>();
  let reports = new Map<string, Report>();
  let flushing: Promise<void> | null = null;

  const add: LedgerCounter["add"] = (tenantId, serviceName, stage, reason, n, at) => {
    if (n <= 0 || !UUID.test(tenantId)) return;
    const k = `${tenantId}${SEP}${serviceName}${SEP}${minuteOf(at ?? now())}${SEP}${stage}${SEP}${reason}`;
    held.set(k, (held.get(k) ?? 0) + n);
    deps.observe?.(stage, reason, n);
  };

  async function write(counts: Map<string, number>, pending: Map<string, Report>): Promise<void> {
    if (pending.size) for (const [k, n] of await applyReports(pending)) counts.set(k, (counts.get(k) ?? 0) + n);
    if (counts.size === 0) return;
    const rows: CountRow[] = [...counts].map(([k, count]) => {
      const [tenant_id, service_name, minute, stage, reason] = k.split(SEP);
      return { tenant_id, service_name, minute: new Date(Number(minute)).toISOString(), stage, reason, count };
    });
    await upsertCounts(deps.sql, rows);
  }

  /**
   * Per instance, the counters that grew since the stored report become counts of this minute;
   * the stored report keeps the greatest of each counter. One transaction with the instance rows
   * locked, so two ingest processes given the same report (a retry) count it once.
   */
  async function applyReports(pending: Map<string, Report>): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const seen: Array<[LedgerStage, string, number]> = [];
    const list = [...pending.values()].sort((a, b) =>
      `${a.tenantId}${a.serviceName}${a.report.instance}` < `${b.tenantId}${b.serviceName}${b.report.instance}`
        ? -1
        : 1,
    );
    const minute = minuteOf(now());
    await deps.sql.begin(async (tx) => {
      const keys = list.map((r) => ({ t: r.tenantId, s: r.serviceName, i: r.report.instance }));
      const stored = await tx<
        { tenant_id: string; service_name: string; instance_id: string; seq: string; counts: Record<string, number> }[]
      >`
        select l.tenant_id, l.service_name, l.instance_id, l.seq::text as seq, l.counts from ledger_sdk_instances l
        join json_to_recordset(${tx.json(keys as any)}::json) as x(t uuid, s text, i text)
          on l.tenant_id = x.t and l.service_name = x.s and l.instance_id = x.i
        order by l.tenant_id, l.service_name, l.instance_id
        for update of l`;
      const before = new Map(stored.map((r) => [`${r.tenant_id}${SEP}${r.service_name}${SEP}${r.instance_id}`, r]));
      const upserts: Array<{ t: string; s: string; i: string; seq: number; counts: Record<string, number> }> = [];
      for (const r of list) {
        const old = before.get(`${r.tenantId}${SEP}${r.serviceName}${SEP}${r.report.instance}`);
        if (old && Number(old.seq) >= r.report.seq) continue; // a retry or an older report
        const merged: Record<string, number> = {};
        for (const c of SDK_COUNTERS) {
          const was = old?.counts[c] ?? 0;
          const is = r.report.counts[c];
          merged[c] = Math.max(was, is);
          const grew = is - was;
          if (grew <= 0) continue;
          const [stage, reason] = c === "requested" ? (["sdk_requested", ""] as const) : (["sdk_dropped", c] as const);
          const k = `${r.tenantId}${SEP}${r.serviceName}${SEP}${minute}${SEP}${stage}${SEP}${reason}`;
          counts.set(k, (counts.get(k) ?? 0) + grew);
          seen.push([stage, reason, grew]);
        }
        upserts.push({ t: r.tenantId, s: r.serviceName, i: r.report.instance, seq: r.report.seq, counts: merged });
      }
      if (upserts.length)
        await tx`
          insert into ledger_sdk_instances (tenant_id, service_name, instance_id, seq, counts, updated_at)
          select x.t, x.s, x.i, x.seq, x.counts, now()
          from json_to_recordset(${tx.json(upserts as any)}::json) as x(t uuid, s text, i text, seq bigint, counts jsonb)
          join tenants on tenants.id = x.t
          on conflict (tenant_id, service_name, instance_id) do update
            set seq = excluded.seq, counts = excluded.counts, updated_at = excluded.updated_at`;
    });
    // Only once committed: a failed transaction is tried again with the same reports.
    for (const [stage, reason, n] of seen) deps.observe?.(stage, reason, n);
    return counts;
  }

  async function flushOnce(): Promise<void> {
    const counts = held;
    const pending = reports;
    held = new Map();
    reports = new Map();
    if (counts.size === 0 && pending.size === 0) return;
    try {
      await write(counts, pending);
    } catch (err) {
      // Kept for the next flush (reports too: a newer one that came meanwhile wins).
      for (const [k, n] of counts) held.set(k, (held.get(k) ?? 0) + n);
      for (const [k, r] of pending) if (!reports.has(k)) reports.set(k, r);
      deps.logger.warn("ledger counts not written; kept for the next flush", { err: err as Error, keys: counts.size });
    }
  }

  const flush = async () => {
    while (flushing) await flushing;
    flushing = flushOnce().finally(() => {
      flushing = null;
    });
    await flushing;
  };

  const timer = setInterval(() => void flush(), deps.flushEveryMs ?? 500);
  (timer as { unref?: () => void }).unref?.();

  return {
    add,
    sdkReport(tenantId, serviceName, report) {
      if (!UUID.test(tenantId)) return;
      const k = `${tenantId}${SEP}${serviceName}${SEP}${report.instance}`;
      const had = reports.get(k);
      if (!had || had.report.seq < report.seq) reports.set(k, { tenantId, serviceName, report });
    },
    counted(stage, reason, n) {
      if (n > 0) deps.observe?.(stage, reason, n);
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
