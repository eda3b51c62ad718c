import type postgres from "postgres";
import { t } from "elysia";
import { Iso, isoNN, Nullable } from "../http/schemas.ts";

export const REVIEW_REASONS = ["below_threshold", "critical_findings", "sample"] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

/** An evaluator's current judgement of a session, as the queue shows it beside the transcript. */
export const Judgement = t.Object({
  evaluatorId: t.String(),
  evaluatorName: t.String(),
  evaluatorVersion: t.Integer(),
  output: t.Record(t.String(), t.Unknown()),
  value: t.Union([t.Number(), t.Boolean(), t.String()]),
  reason: Nullable(t.String()),
  injectionFlagged: t.Boolean(),
  judgedAt: Iso,
  /** The reviewers' verdicts on this evaluator's name for the session. */
  reviews: t.Array(
    t.Object({
      value: t.Union([t.Number(), t.Boolean(), t.String()]),
      authorUserId: Nullable(t.String()),
      comment: Nullable(t.String()),
    }),
  ),
});

export const ReviewItem = t.Object({
  sessionId: t.String(),
  why: t.Union(REVIEW_REASONS.map((r) => t.Literal(r))),
  judgements: t.Array(Judgement),
  criticalFindings: t.Array(t.Object({ detector: t.String(), title: t.String() })),
});
export const ReviewQueue = t.Object({ serviceName: t.String(), items: t.Array(ReviewItem) });

/** A stored value in the shape of the evaluator's output kind. */
export function verdictValue(
  r: { value?: number | null; label?: string | null },
  kind: string,
): number | boolean | string {
  if (r.label !== null && r.label !== undefined) return r.label;
  return kind === "boolean" ? r.value === 1 : (r.value as number);
}

export const judgementOut = (r: postgres.Row, reviews: postgres.Row[]) => ({
  evaluatorId: r.evaluator_id,
  evaluatorName: r.evaluator_name,
  evaluatorVersion: r.evaluator_version,
  output: r.definition.output,
  value: verdictValue(r as { value: number | null; label: string | null }, r.definition.output.kind),
  reason: r.reason ?? null,
  injectionFlagged: r.injection_flagged,
  judgedAt: isoNN(r.created_at),
  reviews: reviews.map((v) => ({
    value: verdictValue(v as { value: number | null; label: string | null }, r.definition.output.kind),
    authorUserId: v.author_user_id ?? null,
    comment: v.comment ?? null,
  })),
});

export const Agreement = t.Object({
  evaluatorId: t.String(),
  outputKind: t.String(),
  pairs: t.Integer({ description: "Sessions x reviewers where both the judge and a reviewer scored" }),
  agreementRate: Nullable(t.Number({ description: "Share of identical verdicts (booleans and labels)" })),
  kappa: Nullable(
    t.Number({ description: "Cohen's kappa (booleans and labels); null without pairs or when chance explains all" }),
  ),
  meanAbsoluteDifference: Nullable(t.Number({ description: "Numbers: mean |judge - reviewer|" })),
});
