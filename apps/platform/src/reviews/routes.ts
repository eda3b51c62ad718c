import { Elysia, t } from "elysia";
import type { PlatformDeps } from "../deps.ts";
import { platformAuth } from "../auth/plugin.ts";
import { resolveService } from "../auth/principal.ts";
import { doc, intQuery } from "../http/schemas.ts";
import { Score } from "../scores/model.ts";
import { REVIEW_REASONS, ReviewQueue } from "./model.ts";
import { reviewQueue } from "../query/reviews.ts";
import { submitReview } from "./service.ts";

const TAG = "Evaluations";

/**
 * The review queue (docs/evaluations.md, "Review"): what the judges flagged, for a member to
 * review with the judge's score and reason beside the transcript; the verdict is a `reviewer`
 * score under the evaluator's name.
 */
export function reviewRoutes(deps: PlatformDeps) {
  return new Elysia({ prefix: "/reviews" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get(
      "/:serviceName",
      async ({ principal, params, query }) =>
        reviewQueue(
          deps.sql,
          await resolveService(deps.sql, principal, params.serviceName),
          query.why ?? "below_threshold",
          query.limit ?? 50,
        ),
      {
        query: t.Object({
          why: t.Optional(
            t.Union(
              REVIEW_REASONS.map((r) => t.Literal(r)),
              { error: `invalid why: must be one of ${REVIEW_REASONS.join(", ")}` },
            ),
          ),
          limit: intQuery("limit", 1, 200, 50),
        }),
        detail: doc(
          TAG,
          "Sessions waiting for review: scored below threshold, with critical findings, or sampled",
          ReviewQueue,
        ),
      },
    )
    .post(
      "/:serviceName/:sessionId",
      async ({ principal, params, body, set }) => {
        const svc = await resolveService(deps.sql, principal, params.serviceName);
        const { created, score } = await submitReview(
          deps.sql,
          principal,
          { ...svc, tenantId: principal.tenantId },
          params.sessionId,
          body,
        );
        set.status = created ? 201 : 200;
        return score;
      },
      {
        body: t.Object(
          {
            evaluator_id: t.String({ minLength: 1, maxLength: 64 }),
            value: t.Union([t.Number(), t.Boolean(), t.String({ minLength: 1, maxLength: 128 })]),
            comment: t.Optional(t.String({ maxLength: 2000 })),
          },
          { additionalProperties: false },
        ),
        detail: doc(TAG, "A reviewer's verdict on a session for one evaluator (a reviewer score)", Score, {
          status: 201,
          alsoStatus: 200,
          description: "200 with the first verdict when this reviewer already reviewed the session for that evaluator.",
        }),
      },
    );
}
