import type postgres from "postgres";
import { decodePayload } from "@cellar/shared/db/payload-codec";
import { deriveSpans } from "../ingest/spans.ts";
import { canonicalModel } from "@cellar/shared/pricing/table";
import type { DetectorConfig } from "@cellar/shared/analysis/detector-config";
import { latencyBaseline, modelKey, type LatencyNorms } from "../analysis/detectors.ts";
import { loadServiceContext, type LatencyNormsSource, type ServiceContext } from "./store.ts";

/**
 * The service's latency baseline per model, from the `llm` spans (derived from the payloads) of
 * its most recent traces (`latency_outlier.baselineTraces`): duration and output tokens per call, reduced to the
 * median and MAD of ms per output token (analysis/detectors.ts). Cached per service for `ttlMs`
 * (a norm moves slowly and maturations come in bursts); a small per-service cache, nothing per
 * session. Read through `via` when given (a maturation's own transaction: never the pool from inside
 * one, see LatencyNormsSource). A failed load gives no baseline (the detector stays quiet) rather than a failed maturation.
 */
export function createLatencyNorms(
  sql: postgres.Sql,
  opts: { ttlMs?: number; maxServices?: number } = {},
): LatencyNormsSource {
  const ttlMs = opts.ttlMs ?? 60_000;
  const cache = new Map<string, { at: number; norms: Promise<LatencyNorms> }>();
  async function load(
    serviceId: string,
    r: DetectorConfig["latency_outlier"],
    via: postgres.Sql | postgres.TransactionSql,
  ): Promise<LatencyNorms> {
    // The llm spans derived from the payloads (shared/spans.ts): the same spans stored rows held.
    const traces = await via<{ trace_id: string; payload: unknown; payload_z: Uint8Array | null }[]>`
      select t.trace_id, t.payload, z.payload_z
      from (select id, tenant_id, trace_id, payload from traces where trace_service_id = ${serviceId} order by start_time desc limit ${r.baselineTraces}) t
      left join trace_payloads z on z.tenant_id = t.tenant_id and z.trace_pk = t.id`;
    const rows = traces.flatMap((t) => {
      try {
        return deriveSpans(t.trace_id, decodePayload(t))
          .filter((s) => s.kind === "llm")
          .map((s) => ({
            model: (s.attributes["gen_ai.response.model"] as string | null | undefined) ?? null,
            requestModel: (s.attributes["gen_ai.request.model"] as string | null | undefined) ?? null,
            ms: s.endTime.getTime() - s.startTime.getTime(),
            tokens: (s.attributes["gen_ai.usage.output_tokens"] as number | undefined) ?? null,
          }));
      } catch {
        return [];
      }
    });
    const byModel = new Map<string, Array<{ latencyMs: number; completionTokens: number }>>();
    for (const row of rows) {
      // Keyed by the detector's own modelKey, with the fields calls.ts gives a call: the priced name
      // of the response's model, else of the request's; the response's model, else the request's.
      const key = modelKey({
        pricedModel: canonicalModel(row.model) ?? canonicalModel(row.requestModel),
        model: row.model ?? row.requestModel,
      });
      const list = byModel.get(key) ?? [];
      list.push({ latencyMs: Number(row.ms), completionTokens: Number(row.tokens ?? 0) });
      byModel.set(key, list);
    }
    return new Map([...byModel].map(([model, list]) => [model, latencyBaseline(list, r.tokenFloor)]));
  }
  return (serviceId, config, via = sql) => {
    const r = config.latency_outlier;
    const key = `${serviceId}:${r.baselineTraces}:${r.tokenFloor}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.norms;
    if (cache.size >= (opts.maxServices ?? 1_000)) cache.delete(cache.keys().next().value!);
    const norms = load(serviceId, r, via).catch(() => new Map() as LatencyNorms);
    cache.set(key, { at: Date.now(), norms });
    return norms;
  };
}

/**
 * What a chunk's maturation needs of its sessions' services, read before it takes its row locks:
 * the detector context, and the latency baselines warmed in their cache (a cold one reads the
 * service's recent payloads: seconds under CPU starvation, which the session locks were held
 * for; docs/maturation.md). A baseline that fails to load here is left to the maturation's own
 * call, which fails it as before. One statement more per chunk (the sessions' services).
 */
export async function prepareServices(
  sql: postgres.Sql,
  sessionPks: string[],
  norms: LatencyNormsSource | undefined,
): Promise<Map<string, ServiceContext>> {
  const services = await sql<{ trace_service_id: string }[]>`
    select distinct trace_service_id from sessions where id = any(${sql.array(sessionPks)}::uuid[])`;
  const context = await loadServiceContext(
    sql,
    services.map((s) => s.trace_service_id),
  );
  if (norms)
    await Promise.all(
      [...context]
        .filter(([, c]) => c.config.latency_outlier.enabled)
        .map(([id, c]) => Promise.resolve(norms(id, c.config)).catch(() => undefined)),
    );
  return context;
}
