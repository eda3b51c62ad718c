import { transcriptHash } from "@cellar/shared/evaluations/context";
import { loadSessionContext } from "@cellar/shared/evaluations/load";
import {
  addSpend,
  evaluationExists,
  pauseEvaluator,
  recordEvaluation,
  spentToday,
  type EvaluatorRow,
} from "@cellar/shared/evaluations/store";
import { evaluateOne, verdictOrFailure, type EvaluatorOutcome } from "./evaluate.ts";
import type { EvaluationRunnerDeps } from "./runner.ts";

/** A running run whose heartbeat is older than this is taken over (its dispatcher died). */
export const RUN_STALE_MS = 30_000;
/** Calls of one session when the judge fails transiently (then the session counts as failed). */
export const RUN_CALL_ATTEMPTS = 3;

/**
 * Runs on past sessions (docs/evaluations.md, "Runs"): polls for a pending run (or one whose
 * dispatcher stopped heartbeating), claims it, and judges its sessions in order with the version
 * the run was started with, under the live path's rules (budget, key refusal pauses, the judge's
 * HTTP under the webhook rules). Progress, counts and spend are written after each session, so a
 * run taken over resumes where it stopped. A backfill records evaluations and scores (a transcript
 * that version already judged is skipped); a dry run keeps each result on the run row only.
 */
export function startRunWorker(deps: EvaluationRunnerDeps, opts: { pollMs?: number } = {}) {
  let stopping = false;
  let busy: Promise<void> | null = null;
  const tick = async () => {
    const [run] = await deps.sql`
      update evaluation_runs set status = 'running', heartbeat_at = now()
      where (id, tenant_id) = (
        select id, tenant_id from evaluation_runs
        where status = 'pending' or (status = 'running' and heartbeat_at < now() - make_interval(secs => ${RUN_STALE_MS / 1000}))
        order by created_at limit 1 for update skip locked)
      returning *`;
    if (run) await work(run);
  };
  const work = async (run: any) => {
    const [e] = await deps.sql<Array<EvaluatorRow & { version_definition: EvaluatorRow["definition"] | null }>>`
      select e.id, e.tenant_id, e.trace_service_id, e.name, e.version, e.target, e.key_encrypted, e.status, e.status_reason,
        to_char(e.budget_day, 'YYYY-MM-DD') as budget_day, e.budget_spent_usd, v.definition as version_definition
      from evaluators e left join evaluator_versions v on v.evaluator_id = e.id and v.tenant_id = e.tenant_id and v.version = ${run.evaluator_version}
      where e.id = ${run.evaluator_id} and e.tenant_id = ${run.tenant_id}`;
    if (!e?.version_definition) return finish(run, "stopped", "the evaluator or its version is gone");
    const evaluator: EvaluatorRow = { ...e, version: run.evaluator_version, definition: e.version_definition };
    for (let i = run.next_index; i < run.session_ids.length; i++) {
      if (stopping) return; // the heartbeat expires and another dispatcher (or this one, restarted) resumes
      const sessionId: string = run.session_ids[i];
      const step = await judgeSession(evaluator, run, sessionId);
      if (step === "paused") return finish(run, "stopped", "the judge refused the key; the evaluator is paused");
      if (step === "budget") return finish(run, "stopped", "the evaluator's daily budget is spent");
      await deps.sql`
        update evaluation_runs set next_index = ${i + 1}, heartbeat_at = now(),
          scored = scored + ${step.scored}, failed = failed + ${step.failed}, skipped = skipped + ${step.skipped},
          spent_usd = spent_usd + ${step.costUsd},
          results = case when ${run.mode} = 'dry_run' then results || ${deps.sql.json([step.result] as never)}::jsonb else results end
        where id = ${run.id} and tenant_id = ${run.tenant_id}`;
    }
    await finish(run, "done", null);
  };
  const finish = async (run: any, status: "done" | "stopped", error: string | null) => {
    await deps.sql`
      update evaluation_runs set status = ${status}, error = ${error}, finished_at = now(), heartbeat_at = now()
      where id = ${run.id} and tenant_id = ${run.tenant_id}`;
  };
  /** One session of a run: what to add to its counts, or why the run stops. */
  const judgeSession = async (e: EvaluatorRow, run: any, sessionId: string) => {
    const none = { scored: 0, failed: 0, skipped: 0, costUsd: 0 };
    const [s] = await deps.sql`
      select id from sessions where trace_service_id = ${e.trace_service_id} and tenant_id = ${e.tenant_id} and session_id = ${sessionId}`;
    const ctx = s ? await loadSessionContext(deps.sql, e.tenant_id, s.id) : null;
    if (!ctx || ctx.items.length === 0)
      return { ...none, skipped: 1, result: { session_id: sessionId, status: "skipped", error: "no transcript" } };
    const key = {
      tenantId: e.tenant_id,
      traceServiceId: e.trace_service_id,
      evaluatorId: e.id,
      evaluatorVersion: e.version,
      target: "session" as const,
      entityId: sessionId,
      transcriptHash: transcriptHash(ctx.items),
    };
    if (run.mode === "backfill" && (await evaluationExists(deps.sql, key)))
      return { ...none, skipped: 1, result: { session_id: sessionId, status: "skipped", error: "already judged" } };
    const budget = e.definition.daily_budget_usd;
    if (budget !== null && e.definition.judge) {
      const [row] = await deps.sql`
        select to_char(budget_day, 'YYYY-MM-DD') as budget_day, budget_spent_usd from evaluators where id = ${e.id} and tenant_id = ${e.tenant_id}`;
      if (spentToday(row as EvaluatorRow, deps.now()) >= budget) return "budget" as const;
    }
    const started = performance.now();
    let out: EvaluatorOutcome = { kind: "retry", error: "not called", retryAfterMs: null };
    for (let attempt = 1; attempt <= RUN_CALL_ATTEMPTS; attempt++) {
      out = await evaluateOne(deps, e, ctx);
      if (out.kind !== "retry" || attempt === RUN_CALL_ATTEMPTS) break;
      await Bun.sleep(Math.min(30_000, Math.max(1_000 * (deps.options?.retryScale ?? 1), out.retryAfterMs ?? 0)));
    }
    if (out.kind === "auth") {
      await pauseEvaluator(deps.sql, e, out.error, deps.now());
      return "paused" as const;
    }
    const verdict = verdictOrFailure(out, out.kind === "retry" ? out.error : "");
    const costUsd = verdict.costUsd ?? 0;
    if (run.mode === "backfill")
      await recordEvaluation(
        deps.sql,
        key,
        {
          ...verdict,
          injectionFlagged: ctx.findings.some((f) => f.inToolResult),
          attempts: 1,
          durationMs: Math.round(performance.now() - started),
          maturationCount: null,
          mode: "backfill",
          scoreName: e.name,
          environment: ctx.environment,
        },
        deps.now(),
      );
    else if (costUsd) await addSpend(deps.sql, e, costUsd, deps.now());
    return {
      scored: verdict.status === "scored" ? 1 : 0,
      failed: verdict.status === "failed" ? 1 : 0,
      skipped: 0,
      costUsd,
      result: {
        session_id: sessionId,
        status: verdict.status,
        value: verdict.value,
        reason: verdict.reason,
        error: verdict.error,
        cost_usd: verdict.costUsd,
      },
    };
  };
  const timer = setInterval(() => {
    if (busy || stopping) return;
    busy = tick()
      .catch((err) => deps.logger.warn("evaluation run failed; the next poll retries", { err: err as Error }))
      .finally(() => {
        busy = null;
      });
  }, opts.pollMs ?? 1_000);
  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      await busy;
    },
  };
}
