import type postgres from "postgres";
import { cpuDelta, pct } from "../lib/proc";

export interface ReadFigure {
  read: string;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  platformCpuMs: number;
  postgresCpuMs: number;
  /** The floor, same run: a bare `select 1` on the bench's pool, timed right after each read. */
  floorP50: number;
  floorP99: number;
}

/**
 * Read latencies through the running platform at the database's current size, one request in
 * flight (the contract's target is for one client): a transcript page, a filtered session
 * search with a metric filter and the total count, the issues list with its count, trace lists
 * filtered by a metric the trace row's base sets (stored as a delta: each candidate rebuilt) and
 * sorted by cost, a trace's metrics, and a trace's spans. Beside each read, its floor in the
 * same run: a bare `select 1` round trip on the bench's own pool, timed right after each request
 * (what any read pays for a Postgres round trip on this machine at this moment).
 */
export async function measureReads(o: {
  sql: postgres.Sql;
  base: string;
  token: string;
  service: string;
  cpu: () => Record<string, number>;
  requests?: number;
}): Promise<ReadFigure[]> {
  const n = o.requests ?? 200;
  const headers = { authorization: `Token ${o.token}`, "content-type": "application/json" };
  const [long] = await o.sql<{ session_id: string; item_count: number }[]>`
    select session_id, item_count from session_analyses where session_id = 'long-1'
    union all (select session_id, item_count from session_analyses order by computed_at desc limit 1) limit 1`;
  const traceIds = (
    await o.sql<{ trace_id: string }[]>`select trace_id from traces tablesample system (0.1) limit 1000`
  ).map((r) => r.trace_id);
  if (traceIds.length === 0)
    traceIds.push(
      ...(await o.sql<{ trace_id: string }[]>`select trace_id from traces limit 1000`).map((r) => r.trace_id),
    );
  const rnd = (k: number) => Math.floor(Math.random() * k);
  const pages = Math.max(1, Math.floor((long?.item_count ?? 100) / 100));
  const reads: Array<[string, () => { path: string; body?: unknown }]> = [
    [
      `transcript lean limit=100, random offset (${long?.item_count ?? 0} items)`,
      () => ({
        path: `/telemetry/otel/sessions/${o.service}/${long?.session_id}/transcript?limit=100&offset=${rnd(pages) * 100}`,
      }),
    ],
    [
      "sessions/filtered costUsd > 0.03 sorted by cost, with total",
      () => ({
        path: "/telemetry/otel/sessions/filtered",
        body: {
          serviceName: o.service,
          filters: [{ field: "costUsd", operator: "gt", value: 0.03 }],
          sort: { field: "costUsd", direction: "desc" },
        },
      }),
    ],
    [
      "sessions/filtered metrics.latencyP95Ms > 4000, with total",
      () => ({
        path: "/telemetry/otel/sessions/filtered",
        body: { serviceName: o.service, filters: [{ field: "metrics.latencyP95Ms", operator: "gt", value: 4000 }] },
      }),
    ],
    [
      "sessions/filtered last 24 h, with total",
      () => ({
        path: "/telemetry/otel/sessions/filtered",
        body: {
          serviceName: o.service,
          filters: [
            { field: "lastActivityAt", operator: "gte", value: new Date(Date.now() - 86_400_000).toISOString() },
          ],
        },
      }),
    ],
    [
      "issues/filtered, with total",
      () => ({ path: "/telemetry/otel/issues/filtered", body: { service_name: o.service } }),
    ],
    [
      "traces/filtered metrics.totalTokens > 0, a page without total",
      () => ({
        path: "/telemetry/otel/traces/filtered",
        body: {
          serviceName: o.service,
          filters: [{ field: "metrics.totalTokens", operator: "gt", value: 0 }],
          skipTotalCount: true,
        },
      }),
    ],
    [
      "traces/filtered sorted by costUsd, a page without total",
      () => ({
        path: "/telemetry/otel/traces/filtered",
        body: { serviceName: o.service, sort: { field: "costUsd", direction: "desc" }, skipTotalCount: true },
      }),
    ],
    ["metrics of a random trace", () => ({ path: `/telemetry/metrics/trace/${traceIds[rnd(traceIds.length)]}` })],
    [
      "spans of a random trace",
      () => ({ path: `/telemetry/otel/spans/${o.service}/${traceIds[rnd(traceIds.length)]}` }),
    ],
  ];
  const out: ReadFigure[] = [];
  // Paced under the platform's per-key limit (50/s, burst 200): reads faster than 20 ms would
  // otherwise meet a 429. The pause is outside the timed request.
  let last = 0;
  for (const [name, make] of reads) {
    const once = async () => {
      const r = make();
      const wait = last + 25 - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      last = performance.now();
      const t0 = performance.now();
      const res = await fetch(
        o.base + r.path,
        r.body === undefined ? { headers } : { method: "POST", headers, body: JSON.stringify(r.body) },
      );
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${r.path} -> ${res.status}`);
      const took = performance.now() - t0;
      const f0 = performance.now();
      await o.sql`select 1`;
      return { took, floor: performance.now() - f0 };
    };
    for (let i = 0; i < 10; i++) await once();
    const c0 = o.cpu();
    const ms: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = await once();
      ms.push(t.took);
      floor.push(t.floor);
    }
    const used = cpuDelta(c0, o.cpu());
    ms.sort((a, b) => a - b);
    floor.sort((a, b) => a - b);
    const f = {
      read: name,
      requests: n,
      p50: +pct(ms, 50).toFixed(1),
      p99: +pct(ms, 99).toFixed(1),
      max: +pct(ms, 100).toFixed(1),
      platformCpuMs: +((used.platform * 1000) / n).toFixed(2),
      postgresCpuMs: +(((used.postgres ?? 0) * 1000) / n).toFixed(2),
      floorP50: +pct(floor, 50).toFixed(2),
      floorP99: +pct(floor, 99).toFixed(2),
    };
    console.log(
      `read: ${f.read}: p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms; CPU per read: platform ${f.platformCpuMs} ms, postgres ${f.postgresCpuMs} ms; floor (select 1, same run) p50 ${f.floorP50} / p99 ${f.floorP99} ms`,
    );
    out.push(f);
  }
  return out;
}
