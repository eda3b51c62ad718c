import { inJsonbOrder } from "@cellar/shared/db/payload-codec";
import { pricingFields } from "@cellar/shared/pricing/breakdown";

/**
 * What a trace contributes to its own analysis (`analyzeTrace`: its calls' metrics and cost), taken
 * from the payload while the writer holds it (docs/analyse-once.md): the request's model and the
 * responses, nothing of the request's history. The same reduction trace maturation made of the
 * stored payload after inflating and parsing it whole (store.ts `loadTracesForMetrics`), taken
 * from the same JSON (keys in jsonb's order, as the payload is stored), so the analysis gives the
 * same answer on either. Prices are not applied here: maturation applies the tenant's price book
 * as before.
 */
export interface TraceContribution {
  request: { model: unknown; service_tier?: unknown };
  responses: unknown;
  /** What pricing reads beside the usage (shared/pricing/breakdown.ts `pricingFields`): provider, service tier. */
  provider?: unknown;
  otel?: { attributes: Record<string, unknown> };
}

/** The contribution of a payload (as parsed, or as stored and read back). */
export function traceContributionOf(payload: Record<string, any>): TraceContribution {
  return {
    request: { model: payload?.request?.model ?? null, ...pricingFields(payload).request },
    responses: payload?.responses ?? null,
    ...pricingFields(payload).rest,
  };
}

/** The contribution as stored (`pending_traces.contribution`, JSON text in jsonb's key order). */
export function encodeTraceContribution(payload: Record<string, any>): string {
  return JSON.stringify(inJsonbOrder(traceContributionOf(payload)));
}

export function decodeTraceContribution(text: string): TraceContribution {
  return JSON.parse(text) as TraceContribution;
}
