import type postgres from "postgres";
import { categoricalAgreement, numericAgreement } from "@cellar/shared/evaluations/agreement";
import type { EvaluatorOutput } from "@cellar/shared/evaluations/definition";
import type { ServiceRef } from "../auth/principal.ts";
import { judgementOut, type ReviewReason, verdictValue } from "../reviews/model.ts";
import { inSnapshot } from "./snapshot.ts";

type Sql = postgres.Sql;

/** The reads of reviews: the review queue and an evaluator's agreement with its reviewers. */

/** Share of judged sessions the random-sample reason offers (by a hash of the session id: stable). */
export const REVIEW_SAMPLE_PERCENT = 10;

/** An evaluator's judgement that is current: its score still stands (a newer one replaced older ones). */
const CURRENT = `evaluations ev join evaluators e on e.id = ev.evaluator_id and e.tenant_id = ev.tenant_id
  join scores sc on sc.id = ev.score_id and sc.tenant_id = ev.tenant_id`;
const NOT_REVIEWED = `not exists (select 1 from scores r where r.trace_service_id = ev.trace_service_id and r.session_id = ev.entity_id
  and r.name = e.name and r.source = 'reviewer')`;

/**
 * The review queue of a service (docs/evaluations.md, "Review"): sessions an evaluator scored
 * below its `review_below`, sessions with a critical finding, or a stable random sample of judged
 * sessions; sessions a reviewer already scored for that evaluator leave the queue. Each item
 * carries every current judgement of the session, with its reason, for the dashboard to show
 * beside the transcript.
 */
export function reviewQueue(sql: Sql, svc: ServiceRef, why: ReviewReason, limit: number) {
  // Its four statements in one snapshot: the sessions chosen and what is shown of them agree.
  return inSnapshot(sql, (tx) => queueIn(tx, svc, why, limit));
}

async function queueIn(sql: postgres.TransactionSql, svc: ServiceRef, why: ReviewReason, limit: number) {
  let ids: string[];
  if (why === "critical_findings") {
    const rows = await sql`
      select s.session_id, max(f.occurred_at) as at from findings f join sessions s on s.id = f.session_pk and s.tenant_id = f.tenant_id
      where f.trace_service_id = ${svc.id} and f.severity = 'critical'
        and not exists (select 1 from scores r where r.trace_service_id = s.trace_service_id and r.session_id = s.session_id and r.source = 'reviewer')
      group by s.session_id order by at desc limit ${limit}`;
    ids = rows.map((r) => r.session_id);
  } else {
    const condition =
      why === "below_threshold"
        ? `(e.definition ->> 'review_below') is not null and ev.value < (e.definition ->> 'review_below')::float8`
        : `mod(abs(hashtext(ev.entity_id)), 100) < ${REVIEW_SAMPLE_PERCENT}`;
    const rows = await sql.unsafe(
      `select ev.entity_id, max(ev.created_at) as at from ${CURRENT}
       where ev.trace_service_id = $1 and ev.target = 'session' and ev.status = 'scored' and ${condition} and ${NOT_REVIEWED}
       group by ev.entity_id order by at desc limit $2`,
      [svc.id, limit],
    );
    ids = rows.map((r) => r.entity_id);
  }
  return { serviceName: svc.name, items: await itemsOf(sql, svc, ids, why) };
}

async function itemsOf(sql: postgres.TransactionSql, svc: ServiceRef, sessionIds: string[], why: ReviewReason) {
  if (sessionIds.length === 0) return [];
  const judged = await sql.unsafe(
    `select ev.entity_id, ev.evaluator_id, ev.evaluator_version, ev.value, ev.label, ev.reason, ev.injection_flagged, ev.created_at,
       e.name as evaluator_name, e.definition
     from ${CURRENT} where ev.trace_service_id = $1 and ev.target = 'session' and ev.entity_id = any($2::text[]) and ev.status = 'scored'
     order by e.name`,
    [svc.id, sessionIds as never],
  );
  const reviews = await sql`
    select session_id, name, value, label, author_user_id, comment from scores
    where trace_service_id = ${svc.id} and session_id = any(${sessionIds}::text[]) and source = 'reviewer' order by created_at`;
  const critical = await sql`
    select s.session_id, f.detector, f.title from findings f join sessions s on s.id = f.session_pk and s.tenant_id = f.tenant_id
    where f.trace_service_id = ${svc.id} and s.session_id = any(${sessionIds}::text[]) and f.severity = 'critical' order by f.occurred_at`;
  return sessionIds.map((sessionId) => ({
    sessionId,
    why,
    judgements: judged
      .filter((j) => j.entity_id === sessionId)
      .map((j) =>
        judgementOut(
          j,
          reviews.filter((r) => r.session_id === sessionId && r.name === j.evaluator_name),
        ),
      ),
    criticalFindings: critical
      .filter((f) => f.session_id === sessionId)
      .map((f) => ({ detector: f.detector, title: f.title })),
  }));
}

/**
 * How often the judge agreed with reviewers on the sessions both scored: each reviewer score of
 * the evaluator's name against the evaluator's current score of that session. Driven from the
 * reviews (few) through their partial index (migration 0037), each looking up the judge's score
 * of its session by scores_session_idx: the join the other way read every score of the service
 * (a hash join over every judgement, linear in them: 41-44 ms p99 at 60,000 judgements,
 * docs/performance.md); now linear in the reviews. An evaluator's scores carry its name (fixed
 * at creation), so matching the reviews on `e.name` pairs the same rows as matching them on each
 * judge score's name.
 */
export async function evaluatorAgreement(
  sql: Sql,
  e: { id: string; name: string; trace_service_id: string; definition: { output: EvaluatorOutput } },
) {
  // `offset 0` keeps the judge's side a lookup per review: pulled up into a plain join, the
  // planner hash-joins it over every judgement again.
  const rows = await sql`
    select j.value as jv, j.label as jl, r.value as rv, r.label as rl
    from scores r cross join lateral (
      select j.value, j.label from scores j
      where j.trace_service_id = r.trace_service_id and j.session_id = r.session_id and j.name = r.name
        and j.source = 'evaluator' and j.evaluator_id = ${e.id}
      offset 0) j
    where r.trace_service_id = ${e.trace_service_id} and r.source = 'reviewer' and r.name = ${e.name} and r.session_id is not null
    limit 100000`;
  const kind = e.definition.output.kind;
  const a =
    kind === "number"
      ? numericAgreement(rows.map((r) => [Number(r.jv), Number(r.rv)] as const))
      : categoricalAgreement(
          rows.map(
            (r) =>
              [
                String(verdictValue({ value: r.jv, label: r.jl }, kind)),
                String(verdictValue({ value: r.rv, label: r.rl }, kind)),
              ] as const,
          ),
        );
  return { evaluatorId: e.id, outputKind: kind, ...a };
}
