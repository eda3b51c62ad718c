import type { ModelCall } from "./calls.ts";
import { type Finding, fp, modelKey } from "./detectors.ts";

/**
 * `unpriced_model` (shared/analysis/detector-config.ts): a call the tenant's price book could not
 * price (its cost is null and calls.ts kept the book's reason). One finding per model per session,
 * fingerprinted on the model, so findings group into one issue per service and model: the issue
 * opens the first time the service calls a model it has no price for.
 */
export class UnpricedModels {
  private readonly seen = new Set<string>();

  call(c: ModelCall): Finding | null {
    if (c.costUsd !== null || !c.costReason) return null;
    const key = modelKey(c);
    if (this.seen.has(key)) return null;
    this.seen.add(key);
    return {
      detector: "unpriced_model",
      fingerprint: fp("unpriced_model", key),
      severity: "low",
      title: `Call not priced (${key})`,
      traceId: c.traceId,
      spanId: c.spanId,
      occurredAt: c.at,
      evidence: { itemId: c.itemId, model: c.model, reason: c.costReason },
    };
  }
}
