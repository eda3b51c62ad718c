import type postgres from "postgres";
import { notFound } from "@cellar/shared/errors";
import { resolveService, type Principal } from "../auth/principal.ts";
import { iso, isoNN } from "../http/schemas.ts";
import { inSnapshot } from "./snapshot.ts";

/**
 * Reads of monitors (docs/monitors.md): one, a list, a monitor's history. A monitor is visible
 * where its service is (auth/principal.ts resolveService); a read of several statements runs in
 * one snapshot.
 */

type Reader = postgres.Sql | postgres.TransactionSql;

export const monitorOut = (r: postgres.Row) => ({
  id: r.id,
  service_name: r.service_name,
  name: r.name,
  entity: r.entity,
  metric: r.metric,
  metric_arg: r.metric_arg ?? null,
  filters: r.filters ?? {},
  window_seconds: r.window_seconds,
  direction: r.direction,
  threshold: r.threshold,
  warning_threshold: r.warning_threshold ?? null,
  hysteresis: r.hysteresis,
  min_samples: r.min_samples,
  enabled: r.enabled,
  state: r.state,
  state_since: isoNN(r.state_since),
  last_value: r.last_value ?? null,
  last_samples: r.last_samples ?? null,
  last_evaluated_at: iso(r.last_evaluated_at),
  created_at: isoNN(r.created_at),
  updated_at: isoNN(r.updated_at),
});

const SELECT = `select m.*, ts.name as service_name, p.value as last_value, p.samples as last_samples, p.bucket as last_evaluated_at
  from monitors m join trace_services ts on ts.id = m.trace_service_id
  left join lateral (select value, samples, bucket from monitor_points where monitor_id = m.id order by bucket desc limit 1) p on true`;

/** A monitor of the principal's tenant in a service the principal can see (404 / 403 otherwise). */
export async function getMonitor(sql: Reader, p: Principal, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw notFound("no such monitor");
  const [row] = await sql.unsafe(`${SELECT} where m.id = $1 and m.tenant_id = $2`, [id, p.tenantId]);
  if (!row) throw notFound("no such monitor");
  await resolveService(sql, p, row.service_name);
  return monitorOut(row);
}

/** GET /monitors/{id}: getMonitor's statements in one snapshot. */
export function readMonitor(sql: postgres.Sql, p: Principal, id: string) {
  return inSnapshot(sql, (tx) => getMonitor(tx, p, id));
}

/** The monitors of the services the principal can see (of one service when named). */
export function listMonitors(sql: postgres.Sql, p: Principal, serviceName?: string) {
  return inSnapshot(sql, async (tx) => {
    const svc = serviceName ? await resolveService(tx, p, serviceName) : null;
    const rows = await tx.unsafe(
      `${SELECT} where m.tenant_id = $1 and ($2::uuid is null or m.trace_service_id = $2) order by ts.name, m.name`,
      [p.tenantId, svc?.id ?? null],
    );
    const visible = [];
    for (const r of rows) {
      try {
        await resolveService(tx, p, r.service_name);
        visible.push(monitorOut(r));
      } catch {}
    }
    return { monitors: visible };
  });
}

/** The monitor's chart (points of the last `hours`) and its state changes, newest first. */
export function monitorHistory(sql: postgres.Sql, p: Principal, id: string, hours = 24) {
  return inSnapshot(sql, async (tx) => {
    const monitor = await getMonitor(tx, p, id);
    const points = await tx`
      select bucket, value, samples, state from monitor_points
      where monitor_id = ${id} and bucket > now() - ${hours} * interval '1 hour' order by bucket limit 1440`;
    const changes = await tx`
      select seq, transition, from_state, to_state, event_type, value, samples, occurred_at, published_at
      from monitor_events where monitor_id = ${id} order by seq desc limit 100`;
    return {
      monitor,
      points: points.map((r) => ({ at: isoNN(r.bucket), value: r.value, samples: r.samples, state: r.state })),
      changes: changes.map((r) => ({
        seq: r.seq,
        transition: r.transition,
        from: r.from_state,
        to: r.to_state,
        event_type: r.event_type ?? null,
        value: r.value,
        samples: r.samples,
        occurred_at: isoNN(r.occurred_at),
        published_at: iso(r.published_at),
      })),
    };
  });
}
