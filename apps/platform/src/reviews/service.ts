import type postgres from "postgres";
import { badRequest, forbidden, notFound } from "@cellar/shared/errors";
import type { EvaluatorOutput } from "@cellar/shared/evaluations/definition";
import { hasRole, type Principal, type ServiceRef } from "../auth/principal.ts";
import { createScore } from "../scores/service.ts";

type Sql = postgres.Sql;

/** A reviewer's verdict (a write). The queue and the agreement are read in query/reviews.ts. */

/** The value a reviewer gave, checked against the evaluator's output kind; "invalid value: ..." or null. */
function verdictProblem(output: EvaluatorOutput, value: unknown): string | null {
  if (output.kind === "boolean") return typeof value === "boolean" ? null : "invalid value: must be true or false";
  if (output.kind === "label")
    return typeof value === "string" && output.labels.includes(value)
      ? null
      : `invalid value: must be one of ${output.labels.join(", ")}`;
  return typeof value === "number" && value >= output.min && value <= output.max
    ? null
    : `invalid value: must be a number from ${output.min} to ${output.max}`;
}

/**
 * A reviewer's verdict on a session for one evaluator: a score of source `reviewer` under the
 * evaluator's name (so the session's reads and rollups show it beside the judge's), one per
 * reviewer, evaluator and session (a second answers the first).
 */
export async function submitReview(
  sql: Sql,
  p: Principal,
  svc: ServiceRef & { tenantId: string },
  sessionId: string,
  body: { evaluator_id: string; value: number | boolean | string; comment?: string },
) {
  if (!hasRole(p, "member")) throw forbidden("reviewing needs role member or higher");
  const [e] = await sql`
    select id, name, definition from evaluators where trace_service_id = ${svc.id} and tenant_id = ${p.tenantId}
      and id::text = ${body.evaluator_id}`;
  if (!e) throw notFound("no such evaluator on this service");
  const problem = verdictProblem(e.definition.output, body.value);
  if (problem) throw badRequest(problem);
  return createScore(
    sql,
    svc,
    {
      session_id: sessionId,
      name: e.name,
      value: body.value,
      ...(body.comment ? { comment: body.comment } : {}),
      source: "reviewer",
      idempotency_key: `review:${e.id}:${sessionId}:${p.userId}`,
    },
    p.userId,
  );
}
