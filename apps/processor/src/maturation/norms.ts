import type postgres from "postgres";
import { canonicalModel } from "@cellar/shared/pricing/table";
import type { DetectorConfig } from "@cellar/shared/analysis/detector-config";
import { latencyBaseline, type LatencyNorms } from "../analysis/detectors.ts";
import type { LatencyNormsSource } from "./store.ts";

/**
 * The service's latency baseline per model, from the `llm` spans of its most recent traces
 * (`latency_outlier.baselineTraces`): duration and output tokens per call, reduced to the
 * median and MAD of ms per output token (analysis/detectors.ts). Cached per service for `ttlMs`
 * (a norm moves slowly and maturations come in bursts); a small per-service cache, nothing per
 * session. A failed load gives no baseline (the detector stays quiet) rather than a failed maturation.
 */
export function createLatencyNorms(
  sql: postgres.Sql,
  opts: { ttlMs?: number; maxServices?: number } = {},
): LatencyNormsSource {
  const ttlMs = opts.ttlMs ?? 60_000;
  const cache = new Map<string, { at: number; norms: Promise<LatencyNorms> }>();
  async function load(serviceId: string, r: DetectorConfig["latency_outlier"]): Promise<LatencyNorms> {
    const rows = await sql<{ model: string | null; ms: number; tokens: number | null }[]>`
      select s.attributes->>'gen_ai.response.model' as model, extract(epoch from s.end_time - s.start_time) * 1000 as ms,
        coalesce(s.attributes->>'gen_ai.usage.completion_tokens', s.attributes->>'gen_ai.usage.output_tokens')::float8 as tokens
      from (select id from traces where trace_service_id = ${serviceId} order by start_time desc limit ${r.baselineTraces}) t
      join spans s on s.trace_pk = t.id and s.kind = 'llm'`;
    const byModel = new Map<string, Array<{ latencyMs: number; completionTokens: number }>>();
    for (const row of rows) {
      const key = canonicalModel(row.model) ?? row.model ?? "unknown";
      const list = byModel.get(key) ?? [];
      list.push({ latencyMs: Number(row.ms), completionTokens: Number(row.tokens ?? 0) });
      byModel.set(key, list);
    }
    return new Map([...byModel].map(([model, list]) => [model, latencyBaseline(list, r.tokenFloor)]));
  }
  return (serviceId, config) => {
    const r = config.latency_outlier;
    const key = `${serviceId}:${r.baselineTraces}:${r.tokenFloor}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.norms;
    if (cache.size >= (opts.maxServices ?? 1_000)) cache.delete(cache.keys().next().value!);
    const norms = load(serviceId, r).catch(() => new Map() as LatencyNorms);
    cache.set(key, { at: Date.now(), norms });
    return norms;
  };
}
