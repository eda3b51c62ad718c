import type postgres from "postgres";
import type { EvaluatorDefinition } from "./definition.ts";

type Sql = postgres.Sql;

/** An evaluator as the runner reads it. */
export interface EvaluatorRow {
  id: string;
  tenant_id: string;
  trace_service_id: string;
  name: string;
  version: number;
  target: "session" | "trace";
  definition: EvaluatorDefinition;
  key_encrypted: string | null;
  status: "active" | "paused";
  status_reason: string | null;
  budget_day: string | null;
  budget_spent_usd: number;
}

/** Evaluators of a service that run (status active), oldest first. */
export async function activeEvaluators(sql: Sql, serviceId: string): Promise<EvaluatorRow[]> {
  return sql<EvaluatorRow[]>`
    select id, tenant_id, trace_service_id, name, version, target, definition, key_encrypted, status, status_reason,
      to_char(budget_day, 'YYYY-MM-DD') as budget_day, budget_spent_usd
    from evaluators where trace_service_id = ${serviceId} and status = 'active' order by created_at, id`;
}

/** The UTC day a budget counts. */
export const budgetDay = (at: Date) => at.toISOString().slice(0, 10);

/** USD spent today, as the row says (a row of an earlier day spent nothing today). */
export const spentToday = (e: Pick<EvaluatorRow, "budget_day" | "budget_spent_usd">, at: Date) =>
  e.budget_day === budgetDay(at) ? Number(e.budget_spent_usd) : 0;

/** The identity of one judgement: an evaluator version on one transcript of one entity. */
export interface EvaluationKey {
  tenantId: string;
  traceServiceId: string;
  evaluatorId: string;
  evaluatorVersion: number;
  target: "session" | "trace";
  entityId: string;
  transcriptHash: string;
}

/** Whether that transcript was judged (scored or failed) by that version already. */
export async function evaluationExists(sql: Sql, k: EvaluationKey): Promise<boolean> {
  const rows = await sql`
    select 1 from evaluations where evaluator_id = ${k.evaluatorId} and evaluator_version = ${k.evaluatorVersion}
      and target = ${k.target} and entity_id = ${k.entityId} and transcript_hash = ${k.transcriptHash} and tenant_id = ${k.tenantId}`;
  return rows.length > 0;
}

/**
 * Whether the caller may call the judge for a judgement: `claimed` (until the claim's end),
 * `judged` (recorded already: nothing to do), or `held` by another caller until `until` (come
 * back then: its holder records it, or its claim ends and it is free again).
 */
export type JudgementClaim = { kind: "claimed" } | { kind: "judged" } | { kind: "held"; until: Date };

/**
 * The claim on one judgement before its judge is called (migration 0042, docs/evaluations.md
 * "One judge call per judgement"): taken while no evaluation exists and no other claim is
 * unexpired, in one statement. Two dispatcher processes judging two copies of a maturation at
 * once: one claims, the other is told `held` and comes back when the claim ends. A process that
 * dies holding one leaves a claim that ends; the redelivered message claims again.
 */
export async function claimJudgement(sql: Sql, k: EvaluationKey, until: Date, now: Date): Promise<JudgementClaim> {
  const key = sql`evaluator_id = ${k.evaluatorId} and evaluator_version = ${k.evaluatorVersion} and target = ${k.target}
    and entity_id = ${k.entityId} and transcript_hash = ${k.transcriptHash} and tenant_id = ${k.tenantId}`;
  const [row] = await sql<{ claimed: boolean; judged: boolean; held: Date | null }[]>`
    with c as (
      insert into evaluation_claims (evaluator_id, tenant_id, evaluator_version, target, entity_id, transcript_hash, claimed_until, claimed_at)
      select ${k.evaluatorId}, ${k.tenantId}, ${k.evaluatorVersion}, ${k.target}, ${k.entityId}, ${k.transcriptHash}, ${until}, ${now}
      where not exists (select 1 from evaluations where ${key})
      on conflict (evaluator_id, evaluator_version, target, entity_id, transcript_hash, tenant_id)
      do update set claimed_until = excluded.claimed_until, claimed_at = excluded.claimed_at
        where evaluation_claims.claimed_until <= excluded.claimed_at
      returning 1
    )
    -- The claim and the evaluation as they were before this statement: the holder's end.
    select exists (select 1 from c) as claimed, exists (select 1 from evaluations where ${key}) as judged,
      (select claimed_until from evaluation_claims where ${key}) as held`;
  if (row.claimed) return { kind: "claimed" };
  if (row.judged || (row.held && !Number.isFinite(row.held.getTime()))) return { kind: "judged" };
  // Held; or taken by a caller whose insert this one waited for (not in this statement's view):
  // come back in a second.
  return { kind: "held", until: row.held && row.held > now ? row.held : new Date(now.getTime() + 1_000) };
}

/** Gives a claim back (the judge failed transiently: the retry, wherever it runs, claims again). */
export async function releaseJudgement(sql: Sql, k: EvaluationKey, until: Date): Promise<void> {
  await sql`delete from evaluation_claims where evaluator_id = ${k.evaluatorId} and evaluator_version = ${k.evaluatorVersion}
    and target = ${k.target} and entity_id = ${k.entityId} and transcript_hash = ${k.transcriptHash}
    and tenant_id = ${k.tenantId} and claimed_until = ${until}`;
}

/** Claims claimed or judged more than `olderThanMs` ago (the evaluation row answers for a judged one). */
export async function pruneJudgementClaims(sql: Sql, now: Date, olderThanMs = 24 * 3600_000): Promise<number> {
  const rows =
    await sql`delete from evaluation_claims where claimed_at < ${new Date(now.getTime() - olderThanMs)} returning 1`;
  return rows.length;
}

export interface EvaluationResult {
  status: "scored" | "failed";
  /** Numbers and booleans (1/0) in `value`, a label in `label`. */
  value: number | boolean | string | null;
  reason: string | null;
  error: string | null;
  injectionFlagged: boolean;
  attempts: number;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  durationMs: number | null;
  maturationCount: number | null;
  mode: "live" | "backfill";
  scoreName: string;
  environment: string | null;
}

/** Characters of a judge's reason kept on the score (the score comment's limit, docs/scores.md). */
export const REASON_CHARS = 2_000;

/**
 * Records one judgement, once (docs/evaluations.md): the evaluation row (unique per evaluator
 * version, entity and transcript hash; a second writer finds it and writes nothing) and, when
 * scored, its score (source `evaluator`), which replaces that evaluator's earlier scores of the
 * entity (live or backfilled) so rollups and monitors read the latest judgement; the judge's cost is added to the
 * evaluator's spend of the day. One transaction. Returns the evaluation id, or null when the
 * judgement was recorded before.
 */
export async function recordEvaluation(
  sql: Sql,
  k: EvaluationKey,
  r: EvaluationResult,
  at: Date,
): Promise<{ evaluationId: string; scoreId: string | null } | null> {
  return sql.begin(async (tx) => {
    const v = valueColumns(r.value);
    const reason = r.reason === null ? null : r.reason.slice(0, REASON_CHARS);
    const [row] = await tx`
      insert into evaluations (tenant_id, trace_service_id, evaluator_id, evaluator_version, target, entity_id, maturation_count,
        transcript_hash, mode, status, value, label, reason, error, injection_flagged, attempts, input_tokens, output_tokens, cost_usd, duration_ms, created_at)
      values (${k.tenantId}, ${k.traceServiceId}, ${k.evaluatorId}, ${k.evaluatorVersion}, ${k.target}, ${k.entityId}, ${r.maturationCount},
        ${k.transcriptHash}, ${r.mode}, ${r.status}, ${r.status === "scored" ? v.value : null}, ${r.status === "scored" ? v.label : null},
        ${reason}, ${r.error}, ${r.injectionFlagged}, ${r.attempts}, ${r.inputTokens}, ${r.outputTokens}, ${r.costUsd}, ${r.durationMs}, ${at})
      on conflict (evaluator_id, evaluator_version, target, entity_id, transcript_hash, tenant_id) do nothing
      returning id`;
    if (!row) return null;
    // Its claim, if one was taken (the live runner's), is judged for good: no copy calls the judge again.
    // ('infinity': a claim that never ends.)
    await tx`update evaluation_claims set claimed_until = 'infinity', claimed_at = ${at}
      where evaluator_id = ${k.evaluatorId} and evaluator_version = ${k.evaluatorVersion} and target = ${k.target}
        and entity_id = ${k.entityId} and transcript_hash = ${k.transcriptHash} and tenant_id = ${k.tenantId}`;
    if (r.costUsd) await addSpend(tx, { id: k.evaluatorId, tenant_id: k.tenantId }, r.costUsd, at);
    if (r.status !== "scored" || r.value === null) return { evaluationId: row.id, scoreId: null };
    const entity = k.target === "session" ? tx`session_id = ${k.entityId}` : tx`trace_id = ${k.entityId}`;
    await tx`delete from scores where trace_service_id = ${k.traceServiceId} and source = 'evaluator' and evaluator_id = ${k.evaluatorId} and ${entity}`;
    const [score] = await tx`
      insert into scores (tenant_id, trace_service_id, target, session_id, trace_id, name, data_type, value, label, comment, source,
        idempotency_key, environment, created_at, evaluator_id, evaluator_version, judge_input_tokens, judge_output_tokens, judge_cost_usd)
      values (${k.tenantId}, ${k.traceServiceId}, ${k.target}, ${k.target === "session" ? k.entityId : null}, ${k.target === "trace" ? k.entityId : null},
        ${r.scoreName}, ${v.data_type}, ${v.value}, ${v.label}, ${reason}, 'evaluator', ${`evaluation:${row.id}`}, ${r.environment}, ${at},
        ${k.evaluatorId}, ${k.evaluatorVersion}, ${r.inputTokens}, ${r.outputTokens}, ${r.costUsd})
      returning id`;
    await tx`update evaluations set score_id = ${score.id} where id = ${row.id} and tenant_id = ${k.tenantId}`;
    return { evaluationId: row.id, scoreId: score.id };
  });
}

/** Adds a judge's cost to the evaluator's spend of the day (a new UTC day starts from zero). */
export async function addSpend(
  sql: Sql | postgres.TransactionSql,
  e: { id: string; tenant_id: string },
  usd: number,
  at: Date,
): Promise<void> {
  await sql`
    update evaluators set budget_spent_usd = case when budget_day = ${budgetDay(at)}::date then budget_spent_usd else 0 end + ${usd},
      budget_day = ${budgetDay(at)}::date
    where id = ${e.id} and tenant_id = ${e.tenant_id}`;
}

function valueColumns(value: number | boolean | string | null) {
  if (typeof value === "boolean") return { data_type: "boolean", value: value ? 1 : 0, label: null };
  if (typeof value === "number") return { data_type: "numeric", value, label: null };
  return { data_type: "categorical", value: null, label: value };
}

/**
 * Pauses an evaluator with a reason the API and dashboard show (a judge that refused the key).
 * Only the version that saw the refusal: an edit made meanwhile (a new key) stays active.
 */
export async function pauseEvaluator(
  sql: Sql,
  e: Pick<EvaluatorRow, "id" | "tenant_id" | "version">,
  reason: string,
  at: Date,
) {
  await sql`
    update evaluators set status = 'paused', status_reason = ${reason}, status_changed_at = ${at}, updated_at = ${at}
    where id = ${e.id} and tenant_id = ${e.tenant_id} and version = ${e.version} and status = 'active'`;
}

/** An operator's pause or resume (admin CLI): a resume clears the reason, as the API's does. */
export async function setEvaluatorStatus(sql: Sql, id: string, status: "active" | "paused") {
  const reason = status === "paused" ? "paused by an operator" : null;
  const [row] = await sql`
    update evaluators set status = ${status}, status_reason = ${reason}, status_changed_at = now(), updated_at = now()
    where id = ${id} returning id, name, status, status_reason`;
  return row as { id: string; name: string; status: string; status_reason: string | null } | undefined;
}
