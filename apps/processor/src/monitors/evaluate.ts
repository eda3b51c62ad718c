import type postgres from "postgres";
import { LRUCache } from "lru-cache";
import type { MaturedMessage, MonitorEventMessage } from "@cellar/shared/payloads";
import { loadSessionFacts, loadTraceFacts } from "@cellar/shared/monitors/facts";
import { AGGREGATE_SQL, aggregateOf, matchesFilters, sampleOf } from "@cellar/shared/monitors/samples";
import {
  applyTransition,
  decideTransition,
  type MonitorState,
  type MonitorThresholds,
} from "@cellar/shared/monitors/state-machine";
import type { Aggregate } from "@cellar/shared/monitors/definition";

/** Chart points are kept this long (a point a minute per monitor: at most 10,080 rows each). */
export const POINTS_KEPT_DAYS = 7;

/** An enabled monitor as evaluation reads it. */
export interface MonitorRow {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  name: string;
  entity: "session" | "trace";
  metric: string;
  metric_arg: string | null;
  filters: Record<string, string>;
  window_seconds: number;
  direction: "above" | "below";
  threshold: number;
  warning_threshold: number | null;
  hysteresis: number;
  min_samples: number;
  state: MonitorState;
}

const thresholdsOf = (m: MonitorRow): MonitorThresholds => ({
  direction: m.direction,
  threshold: m.threshold,
  warningThreshold: m.warning_threshold,
  hysteresis: m.hysteresis,
  minSamples: m.min_samples,
});

/**
 * Enabled monitors per service, cached for `ttlMs` (definitions change rarely; an edit applies
 * from the next maturation after its entry expires). Bounded: at most 10,000 services held.
 */
export function createMonitorCache(sql: postgres.Sql, ttlMs: number) {
  const cache = new LRUCache<string, MonitorRow[]>({ max: 10_000, ttl: ttlMs });
  return async (serviceId: string): Promise<MonitorRow[]> => {
    const hit = cache.get(serviceId);
    if (hit) return hit;
    const rows = await sql<MonitorRow[]>`
      select id, tenant_id, trace_service_id, name, entity, metric, metric_arg, filters, window_seconds, direction,
        threshold, warning_threshold, hysteresis, min_samples, state
      from monitors where trace_service_id = ${serviceId} and enabled order by id`;
    cache.set(serviceId, rows);
    return rows;
  };
}

/** The webhook `data` of a state change (docs/monitors.md, keys snake_case like the contract's). */
function eventData(
  m: MonitorRow,
  serviceName: string,
  change: { seq: number; from: MonitorState; to: MonitorState; transition: string },
  agg: { value: number; samples: number },
  occurredAt: string,
) {
  return {
    tenant_id: m.tenant_id,
    trace_service_id: m.trace_service_id,
    service_name: serviceName,
    monitor_id: m.id,
    monitor_name: m.name,
    sequence: change.seq,
    state: change.to,
    previous_state: change.from,
    transition: change.transition,
    entity: m.entity,
    metric: m.metric,
    metric_arg: m.metric_arg,
    value: agg.value,
    samples: agg.samples,
    threshold: m.threshold,
    warning_threshold: m.warning_threshold,
    direction: m.direction,
    window_seconds: m.window_seconds,
    occurred_at: occurredAt,
  };
}

/**
 * Maturations of one service through every monitor of it: the entity's sample per monitor whose
 * filters it matches, each such monitor's aggregate over its window ending at the maturation,
 * and the state machine's transitions, all in one transaction: a state change and its history /
 * outbox row commit together or not at all. Idempotent: samples are keyed by (monitor, entity),
 * and a replay that finds the state already moved decides from that state. A sample is stamped
 * with its maturation time, and a copy of an older maturation (MATURED can carry one twice,
 * docs/maturation.md) leaves a newer sample as it is; the window is the last `window_seconds` as
 * of the evaluation.
 * Returns the committed state changes that notify, for the caller to publish.
 */
export async function evaluateMaturations(
  sql: postgres.Sql,
  monitorsOf: (serviceId: string) => Promise<MonitorRow[]>,
  batch: MaturedMessage[],
): Promise<MonitorEventMessage[]> {
  if (batch.length === 0) return [];
  const { traceServiceId, serviceName } = batch[0];
  const all = await monitorsOf(traceServiceId);
  // One sample per (monitor, entity): the latest maturation of an entity in the batch wins.
  const bySample = new Map<string, { monitor: MonitorRow; entityPk: string; at: string; value: number }>();
  for (const entity of ["session", "trace"] as const) {
    const messages = batch.filter((m) => (m.type === "session.matured" ? "session" : "trace") === entity);
    const monitors = all.filter((x) => x.entity === entity);
    if (messages.length === 0 || monitors.length === 0) continue;
    const pks = [...new Set(messages.map((m) => m.entityPk))];
    const atOf = new Map<string, string>();
    for (const m of messages) if ((atOf.get(m.entityPk) ?? "") < m.occurredAt) atOf.set(m.entityPk, m.occurredAt);
    // Entities deleted since (session DELETE, retention) have no facts and no sample.
    const facts =
      entity === "session"
        ? await loadSessionFacts(sql, sql`s.id = any(${pks}::uuid[])`, pks.length)
        : await loadTraceFacts(sql, sql`tr.id = any(${pks}::uuid[])`, pks.length);
    for (const f of facts) {
      for (const x of monitors) {
        if (!matchesFilters(x.filters, f)) continue;
        const value = sampleOf({ metric: x.metric, metricArg: x.metric_arg, filters: x.filters }, f);
        if (value === null || !Number.isFinite(value)) continue;
        bySample.set(`${x.id}|${f.entityPk}`, { monitor: x, entityPk: f.entityPk, at: atOf.get(f.entityPk)!, value });
      }
    }
  }
  const rows = [...bySample.values()];
  if (rows.length === 0) return [];
  const sampled = [...new Map(rows.map((r) => [r.monitor.id, { monitor: r.monitor }])).values()];
  const at = batch.reduce((latest, m) => (m.occurredAt > latest ? m.occurredAt : latest), batch[0].occurredAt);
  return sql.begin(async (tx) => {
    // One evaluation of a service at a time: the aggregate below then sees every sample committed
    // before it, so the last evaluation of a burst decides on the whole window (concurrent ones
    // would each miss the others' uncommitted samples and could all decide on a partial set).
    await tx`select pg_advisory_xact_lock(hashtextextended(${`monitors:${traceServiceId}`}, 0))`;
    await tx`
      insert into monitor_samples (monitor_id, tenant_id, entity_pk, at, value)
      select * from unnest(${rows.map((r) => r.monitor.id)}::uuid[], ${rows.map((r) => r.monitor.tenant_id)}::uuid[], ${rows.map((r) => r.entityPk)}::uuid[],
        ${rows.map((r) => r.at)}::timestamptz[], ${rows.map((r) => r.value)}::float8[])
      on conflict (monitor_id, entity_pk, tenant_id) do update set at = excluded.at, value = excluded.value
      where monitor_samples.at <= excluded.at`;
    return settleMonitors(
      tx,
      sampled.map((x) => x.monitor),
      serviceName,
      at,
    );
  });
}

/**
 * The monitors' aggregates over their windows (their samples just written), the state machine's
 * transitions (history and outbox rows in the same transaction), and the chart's points. Runs
 * under the service's lock. Returns the state changes that notify, for the caller to publish.
 * Shared by the maturation evaluation and the ledger's `loss` (loss.ts).
 */
export async function settleMonitors(
  tx: postgres.TransactionSql,
  monitors: MonitorRow[],
  serviceName: string,
  at: string,
): Promise<MonitorEventMessage[]> {
  const sampled = monitors.map((monitor) => ({ monitor }));
  const ids = monitors.map((m) => m.id);
  // The window is the last window_seconds as of this evaluation (the database's clock).
  const aggregates = new Map<string, { value: number | null; samples: number }>();
  const byAggregate = new Map<Aggregate, string[]>();
  for (const s of sampled) {
    const kind = aggregateOf(s.monitor.metric);
    byAggregate.set(kind, [...(byAggregate.get(kind) ?? []), s.monitor.id]);
  }
  for (const [kind, group] of byAggregate) {
    const rows = await tx<{ monitor_id: string; n: number; v: number | null }[]>`
      select s.monitor_id, count(*)::int as n, (${tx.unsafe(AGGREGATE_SQL[kind])})::float8 as v
      from monitor_samples s join monitors m on m.id = s.monitor_id
      where s.monitor_id = any(${group}::uuid[]) and s.at > now() - m.window_seconds * interval '1 second'
      group by s.monitor_id`;
    for (const r of rows) aggregates.set(r.monitor_id, { value: r.v, samples: r.n });
  }
  // Lock only monitors the current (unlocked) state says may move, then decide again under the
  // lock (the cached rows' state may be stale; the definitions are what the cache is for).
  const current = await tx<
    { id: string; state: MonitorState }[]
  >`select id, state from monitors where id = any(${ids}::uuid[])`;
  const stateNow = new Map(current.map((r) => [r.id, r.state]));
  const candidates = sampled
    .map((s) => s.monitor)
    .filter(
      (x) =>
        stateNow.has(x.id) &&
        decideTransition(stateNow.get(x.id)!, aggregates.get(x.id) ?? { value: null, samples: 0 }, thresholdsOf(x)),
    );
  const events: MonitorEventMessage[] = [];
  if (candidates.length) {
    const locked = await tx<{ id: string; state: MonitorState; transitions: number }[]>`
      select id, state, transitions from monitors where id = any(${candidates.map((c) => c.id)}::uuid[]) order by id for update`;
    const changes: Array<Record<string, unknown>> = [];
    for (const row of locked) {
      const monitor = candidates.find((c) => c.id === row.id)!;
      const agg = aggregates.get(row.id)!;
      const transition = decideTransition(row.state, agg, thresholdsOf(monitor));
      stateNow.set(row.id, row.state);
      if (!transition) continue;
      const { to, notify } = applyTransition(row.state, transition);
      const seq = row.transitions + 1;
      stateNow.set(row.id, to);
      const value = agg.value!;
      const data = eventData(
        monitor,
        serviceName,
        { seq, from: row.state, to, transition },
        { value, samples: agg.samples },
        at,
      );
      const message: MonitorEventMessage | null = notify
        ? {
            type: notify,
            tenantId: monitor.tenant_id,
            traceServiceId: monitor.trace_service_id,
            monitorId: row.id,
            seq,
            occurredAt: at,
            data,
          }
        : null;
      if (message) events.push(message);
      changes.push({
        monitor_id: row.id,
        seq,
        tenant_id: monitor.tenant_id,
        transition,
        from_state: row.state,
        to_state: to,
        event_type: notify,
        value,
        samples: agg.samples,
        occurred_at: at,
        payload: message,
      });
    }
    if (changes.length) {
      await tx`
        update monitors m set state = x.to_state, state_since = x.occurred_at, transitions = x.seq, updated_at = now()
        from jsonb_to_recordset(${tx.json(changes as any)}::jsonb) as x(monitor_id uuid, seq int, to_state text, occurred_at timestamptz)
        where m.id = x.monitor_id`;
      await tx`
        insert into monitor_events (monitor_id, seq, tenant_id, transition, from_state, to_state, event_type, value, samples, occurred_at, payload)
        select monitor_id, seq, tenant_id, transition, from_state, to_state, event_type, value, samples, occurred_at, payload
        from jsonb_to_recordset(${tx.json(changes as any)}::jsonb) as x(monitor_id uuid, seq int, tenant_id uuid, transition text,
          from_state text, to_state text, event_type text, value float8, samples int, occurred_at timestamptz, payload jsonb)`;
    }
  }
  // The chart: the last evaluation of each minute, kept POINTS_KEPT_DAYS. Samples older than
  // twice the window go.
  const points = sampled
    .filter((s) => stateNow.has(s.monitor.id))
    .map((s) => ({
      monitor_id: s.monitor.id,
      tenant_id: s.monitor.tenant_id,
      value: aggregates.get(s.monitor.id)?.value ?? null,
      samples: aggregates.get(s.monitor.id)?.samples ?? 0,
      state: stateNow.get(s.monitor.id),
    }));
  await tx`
    insert into monitor_points (monitor_id, tenant_id, bucket, value, samples, state)
    select monitor_id, tenant_id, date_trunc('minute', now()), value, samples, state
    from jsonb_to_recordset(${tx.json(points as any)}::jsonb) as x(monitor_id uuid, tenant_id uuid, value float8, samples int, state text)
    on conflict (monitor_id, bucket, tenant_id) do update set value = excluded.value, samples = excluded.samples, state = excluded.state`;
  await tx`delete from monitor_points where monitor_id = any(${ids}::uuid[]) and bucket < now() - ${POINTS_KEPT_DAYS} * interval '1 day'`;
  await tx`
    delete from monitor_samples s using monitors m
    where m.id = s.monitor_id and s.monitor_id = any(${ids}::uuid[]) and s.at < now() - 2 * m.window_seconds * interval '1 second'`;
  return events;
}
