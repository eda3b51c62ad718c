import type postgres from "postgres";
import { canonicalModel } from "@cellar/shared/pricing/openai";
import type { LatencyNorms } from "./detectors";
import { percentile } from "./metrics";

/**
 * The service's normal latency per model: median of the `llm` spans of its most recent traces.
 * Cached per service for `ttlMs` (a norm moves slowly, and maturations come in bursts); a small
 * per-service cache, nothing per session.
 */
export function createLatencyNorms(sql: postgres.Sql, opts: { ttlMs?: number; recentTraces?: number; maxServices?: number } = {}) {
  const ttlMs = opts.ttlMs ?? 60_000;
  const cache = new Map<string, { at: number; norms: Promise<LatencyNorms> }>();
  async function load(serviceId: string): Promise<LatencyNorms> {
    const rows = await sql<{ model: string | null; ms: number }[]>`
      select s.attributes->>'gen_ai.response.model' as model, extract(epoch from s.end_time - s.start_time) * 1000 as ms
      from (select id from traces where trace_service_id = ${serviceId} order by start_time desc limit ${opts.recentTraces ?? 500}) t
      join spans s on s.trace_pk = t.id and s.kind = 'llm'`;
    const byModel = new Map<string, number[]>();
    for (const r of rows) {
      const key = canonicalModel(r.model) ?? r.model ?? "unknown";
      byModel.set(key, [...(byModel.get(key) ?? []), Number(r.ms)]);
    }
    return new Map([...byModel].map(([model, list]) => [model, { p50Ms: percentile(list, 50), samples: list.length }]));
  }
  return (serviceId: string): Promise<LatencyNorms> => {
    const hit = cache.get(serviceId);
    if (hit && Date.now() - hit.at < ttlMs) return hit.norms;
    if (cache.size >= (opts.maxServices ?? 1_000)) cache.delete(cache.keys().next().value!);
    const norms = load(serviceId).catch(() => new Map() as LatencyNorms);
    cache.set(serviceId, { at: Date.now(), norms });
    return norms;
  };
}
