import { t } from "elysia";
import { EvaluatorCreate, EvaluatorUpdate } from "@cellar/shared/evaluations/definition";
import type { PlatformDeps } from "../deps.ts";
import { created, type Resource, resource } from "../http/resource.ts";
import { doc, intQuery, LOOKUP_ERRORS } from "../http/schemas.ts";
import { Evaluator, EvaluatorList, EvaluationList, EvaluationRun, RunStarted } from "./model.ts";
import * as svc from "./service.ts";
import { getRun, MAX_RUN_SESSIONS, startRun } from "./runs.ts";
import { Agreement } from "../reviews/model.ts";
import { evaluatorAgreement } from "../query/reviews.ts";

const TAG = "Evaluations";

/**
 * /evaluators (docs/evaluations.md): evaluators per service, their versions' judgements. Any
 * role reads the evaluators of services it can see; member and above create, change and delete
 * checks, admin and above judges (they send conversations out). The judge's key is write-only.
 */
export function evaluatorRoutes(deps: PlatformDeps) {
  const s = svc.evaluatorServiceDeps(deps);
  return resource(deps, "/evaluators")
    .use((app) => definitionRoutes(app, s))
    .use((app) => judgementRoutes(app, deps, s));
}

/** The evaluators themselves: list, create, read, change, delete. */
function definitionRoutes(app: Resource, s: svc.EvaluatorServiceDeps) {
  return app
    .get("", ({ principal, query }) => svc.listEvaluators(s, principal, query.serviceName), {
      query: t.Object({ serviceName: t.Optional(t.String({ minLength: 1, maxLength: 200 })) }),
      detail: doc(TAG, "Evaluators of the tenant (of one service with ?serviceName=)", EvaluatorList),
    })
    .post("", async ({ principal, body, set }) => created(set, await svc.createEvaluator(s, principal, body)), {
      body: EvaluatorCreate,
      detail: doc(TAG, "Create an evaluator (version 1)", Evaluator, {
        status: 201,
        errors: [400, 401, 403, 404, 409],
        description:
          "409 when the service has an evaluator of that name or already 20 evaluators. A judge needs role admin; a check, member.",
      }),
    })
    .get("/:id", ({ principal, params }) => svc.getEvaluator(s, principal, params.id), {
      detail: doc(TAG, "An evaluator: its current version, status and today's spend", Evaluator, {
        errors: LOOKUP_ERRORS,
      }),
    })
    .put("/:id", ({ principal, params, body }) => svc.updateEvaluator(s, principal, params.id, body), {
      body: EvaluatorUpdate,
      detail: doc(
        TAG,
        "Change an evaluator: definition fields make a new version; status pauses or resumes it",
        Evaluator,
      ),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await svc.deleteEvaluator(s, principal, params.id);
        set.status = 204;
        return null;
      },
      { detail: doc(TAG, "Delete an evaluator and its evaluations (its scores stay)", t.Null(), { status: 204 }) },
    );
}

/** What an evaluator judged: runs over past sessions, agreement with reviewers, its evaluations. */
function judgementRoutes(app: Resource, deps: PlatformDeps, s: svc.EvaluatorServiceDeps) {
  return app
    .post(
      "/:id/runs",
      async ({ principal, params, body, set }) => {
        const out = await startRun(s, principal, params.id, body);
        set.status = out.started ? 201 : 200;
        return out;
      },
      {
        body: t.Object(
          {
            mode: t.Union([t.Literal("dry_run"), t.Literal("backfill")], {
              error: "invalid mode: dry_run or backfill",
            }),
            session_ids: t.Optional(
              t.Array(t.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: MAX_RUN_SESSIONS }),
            ),
            latest: t.Optional(
              t.Integer({ minimum: 1, maximum: MAX_RUN_SESSIONS, error: `invalid latest: 1 to ${MAX_RUN_SESSIONS}` }),
            ),
            estimate_only: t.Optional(t.Boolean()),
          },
          { additionalProperties: false },
        ),
        detail: doc(
          TAG,
          "Try the evaluator on past matured sessions: its cost estimated, then a dry run or a backfill",
          RunStarted,
          {
            status: 201,
            alsoStatus: 200,
            description: "estimate_only answers 200 with the estimate and starts nothing.",
          },
        ),
      },
    )
    .get("/:id/runs/:runId", ({ principal, params }) => getRun(s, principal, params.id, params.runId), {
      detail: doc(TAG, "A run's progress, spend so far and (dry runs) results", EvaluationRun, {
        errors: LOOKUP_ERRORS,
      }),
    })
    .get(
      "/:id/agreement",
      async ({ principal, params }) =>
        evaluatorAgreement(deps.sql, (await svc.getEvaluatorRow(s, principal, params.id)) as never),
      {
        detail: doc(
          TAG,
          "How often the judge agreed with reviewers (agreement rate and Cohen's kappa, or mean absolute difference)",
          Agreement,
          { errors: LOOKUP_ERRORS },
        ),
      },
    )
    .get(
      "/:id/evaluations",
      ({ principal, params, query }) =>
        svc.listEvaluations(s, principal, params.id, { status: query.status, limit: query.limit ?? 50 }),
      {
        query: t.Object({
          status: t.Optional(
            t.Union([t.Literal("scored"), t.Literal("failed")], { error: "invalid status: must be scored or failed" }),
          ),
          limit: intQuery("limit", 1, 500, 50),
        }),
        detail: doc(TAG, "The evaluator's latest judgements, failed ones with their error", EvaluationList),
      },
    );
}
