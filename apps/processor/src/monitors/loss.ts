import type postgres from "postgres";
import { uuidv7Floor } from "../ledger/reconcile.ts";
import { type MonitorRow, settleMonitors } from "./evaluate.ts";
import { publishMonitorEvents, type OutboxDeps } from "./outbox.ts";

const MINUTE = 60_000;

/**
 * The `loss` monitors (docs/monitors.md, docs/ledger.md): items of their service dropped by the
 * SDKs, refused by ingest or dead-lettered (less those replayed) in the window, from the ledger's
 * counts. Loss needs no maturation to be seen (a service whose every item is refused has none),
 * so these are evaluated on a timer: one sample per minute of the window (the minute's loss, the
 * current minute's even when 0, so an alert can recover), then the state machine as for any
 * monitor, under the same per-service lock, and the notifying changes published.
 */
export async function evaluateLossMonitors(deps: OutboxDeps): Promise<number> {
  const monitors = await deps.sql<(MonitorRow & { service_name: string })[]>`
    select m.id, m.tenant_id, m.trace_service_id, m.name, m.entity, m.metric, m.metric_arg, m.filters, m.window_seconds,
      m.direction, m.threshold, m.warning_threshold, m.hysteresis, m.min_samples, m.state, ts.name as service_name
    from monitors m join trace_services ts on ts.id = m.trace_service_id and ts.tenant_id = m.tenant_id
    where m.enabled and m.metric = 'loss' order by m.trace_service_id, m.id`;
  const byService = new Map<string, Array<(typeof monitors)[number]>>();
  for (const m of monitors) {
    const group = byService.get(m.trace_service_id);
    if (group) group.push(m);
    else byService.set(m.trace_service_id, [m]);
  }
  let published = 0;
  for (const group of byService.values()) {
    const { tenant_id: tenantId, trace_service_id: serviceId, service_name: serviceName } = group[0];
    const longest = Math.max(...group.map((m) => m.window_seconds));
    const events = await deps.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtextextended(${`monitors:${serviceId}`}, 0))`;
      const [{ now }] = await tx<{ now: Date }[]>`select now()`;
      const rows = await tx<{ minute: Date; loss: string }[]>`
        select minute, sum(case when stage = 'replayed' then -count else count end)::text as loss
        from ledger_counts
        where tenant_id = ${tenantId} and service_name = ${serviceName} and stage in ('sdk_dropped', 'refused', 'dead_lettered', 'replayed')
          and minute > ${now}::timestamptz - ${longest} * interval '1 second' - interval '1 minute'
        group by minute`;
      const current = Math.floor(now.getTime() / MINUTE) * MINUTE;
      const losses = new Map<number, number>([[current, 0]]);
      for (const r of rows) losses.set(new Date(r.minute).getTime(), Number(r.loss));
      const samples = group.flatMap((m) =>
        [...losses]
          // A minute's sample is stamped at its end (the current one: now), inside the windows that cover it.
          .map(([minute, value]) => ({ minute, at: Math.min(minute + MINUTE - 1, now.getTime()), value }))
          .filter((x) => x.at > now.getTime() - m.window_seconds * 1000)
          .map((x) => ({
            m: m.id,
            t: tenantId,
            e: uuidv7Floor(x.minute),
            at: new Date(x.at).toISOString(),
            v: x.value,
          })),
      );
      await tx`
        insert into monitor_samples (monitor_id, tenant_id, entity_pk, at, value)
        select x.m, x.t, x.e, x.at, x.v from json_to_recordset(${tx.json(samples as any)}::json) as x(m uuid, t uuid, e uuid, at timestamptz, v float8)
        on conflict (monitor_id, entity_pk, tenant_id) do update set at = excluded.at, value = excluded.value`;
      return settleMonitors(tx, group, serviceName, now.toISOString());
    });
    await publishMonitorEvents(deps, events);
    published += events.length;
  }
  return published;
}
