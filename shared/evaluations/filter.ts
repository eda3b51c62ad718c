import { fnv1a } from "../nats/lanes.ts";
import type { EvalContext } from "./context.ts";
import type { EvaluatorFilter } from "./definition.ts";

/**
 * Whether an entity falls in an evaluator's sample (pure): by a hash of the evaluator and the
 * entity, so a re-matured session stays in or out of the sample and is not judged at random.
 */
export function inSample(rate: number, evaluatorId: string, entityId: string): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return fnv1a(`${evaluatorId}\n${entityId}`) / 0x1_0000_0000 < rate;
}

/**
 * Whether a loaded entity matches an evaluator's filter (pure; every given condition must hold).
 * Without `metadata` in `ctx` (the facts a pre-check loads), the metadata condition is not checked.
 */
export function matchesFilter(
  f: EvaluatorFilter,
  ctx: Pick<EvalContext, "environment" | "models" | "findings" | "scoreMeans"> & { metadata?: Record<string, string> },
): boolean {
  if (f.environment && !f.environment.includes(ctx.environment ?? "")) return false;
  if (f.model && !ctx.models.some((m) => f.model!.includes(m))) return false;
  if (f.has_findings !== undefined && f.has_findings !== ctx.findings.length > 0) return false;
  if (f.score_below) {
    const mean = ctx.scoreMeans[f.score_below.name];
    if (mean === undefined || !(mean < f.score_below.value)) return false;
  }
  if (f.metadata && ctx.metadata)
    for (const [k, v] of Object.entries(f.metadata)) if (ctx.metadata[k] !== v) return false;
  return true;
}
