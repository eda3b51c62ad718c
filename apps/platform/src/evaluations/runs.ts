import { badRequest, notFound } from "@cellar/shared/errors";
import { estimateCost } from "@cellar/shared/evaluations/estimate";
import { loadSessionContext } from "@cellar/shared/evaluations/load";
import type { EvalContext } from "@cellar/shared/evaluations/context";
import { loadPriceBooks } from "@cellar/shared/pricing/tenant";
import type { Principal } from "../auth/principal.ts";
import { iso, isoNN } from "../http/schemas.ts";
import { inSnapshot } from "../query/snapshot.ts";
import { evaluatorRowIn, getEvaluatorRow, requireWriter, type EvaluatorServiceDeps } from "./service.ts";

/** Sessions one run takes at most (its estimate loads each one). */
export const MAX_RUN_SESSIONS = 200;

export interface RunRequest {
  mode: "dry_run" | "backfill";
  session_ids?: string[];
  latest?: number;
  estimate_only?: boolean;
}

const runOut = (r: any) => ({
  id: r.id,
  evaluator_id: r.evaluator_id,
  evaluator_version: r.evaluator_version,
  mode: r.mode,
  status: r.status,
  sessions: r.session_ids.length,
  done: r.next_index,
  scored: r.scored,
  failed: r.failed,
  skipped: r.skipped,
  estimated_usd: r.estimated_usd ?? null,
  spent_usd: r.spent_usd,
  results: r.results,
  error: r.error ?? null,
  created_at: isoNN(r.created_at),
  finished_at: iso(r.finished_at),
});

/**
 * Estimates, and unless `estimate_only` starts, a run of the evaluator's current version on the
 * given sessions or the service's latest matured ones (docs/evaluations.md, "Runs"). The
 * dispatcher picks a started run up; its judge calls follow the live path's rules.
 */
export async function startRun(deps: EvaluatorServiceDeps, p: Principal, id: string, body: RunRequest) {
  const e = await getEvaluatorRow(deps, p, id);
  requireWriter(p, e.definition);
  if (e.target !== "session") throw badRequest("invalid mode: runs take sessions; this evaluator judges traces");
  if ((body.session_ids === undefined) === (body.latest === undefined))
    throw badRequest("invalid session_ids: give session_ids or latest, not both");
  const ids = body.session_ids
    ? [...new Set(body.session_ids)]
    : (
        await deps.sql`
          select session_id from sessions where trace_service_id = ${e.trace_service_id} and tenant_id = ${p.tenantId}
            and matured_at is not null order by matured_at desc limit ${body.latest!}`
      ).map((r) => r.session_id as string);
  if (ids.length === 0) throw badRequest("invalid session_ids: no matured session to run on");
  if (ids.length > MAX_RUN_SESSIONS) throw badRequest(`invalid session_ids: at most ${MAX_RUN_SESSIONS} per run`);
  const pks = await deps.sql`
    select id, session_id from sessions where trace_service_id = ${e.trace_service_id} and tenant_id = ${p.tenantId}
      and session_id = any(${ids}::text[]) and matured_at is not null`;
  if (pks.length !== ids.length) {
    const found = new Set(pks.map((r) => r.session_id));
    throw notFound(`no matured session ${JSON.stringify(ids.find((i) => !found.has(i)))} in this service`);
  }
  const contexts: EvalContext[] = [];
  for (const r of pks) {
    const ctx = await loadSessionContext(deps.sql, p.tenantId, r.id);
    if (ctx) contexts.push(ctx);
  }
  const book = (await loadPriceBooks(deps.sql, [p.tenantId]))(p.tenantId);
  const estimate = estimateCost(e.definition, contexts, book);
  const out = {
    mode: body.mode,
    sessions: ids.length,
    estimate: { usd: estimate.usd, input_tokens: estimate.inputTokens, output_tokens: estimate.outputTokens },
  };
  if (body.estimate_only) return { started: false as const, ...out, run: null };
  const [run] = await deps.sql`
    insert into evaluation_runs (tenant_id, evaluator_id, evaluator_version, mode, session_ids, estimated_usd, created_by)
    values (${p.tenantId}, ${e.id}, ${e.version}, ${body.mode}, ${ids}, ${estimate.usd}, ${p.userId}) returning *`;
  return { started: true as const, ...out, run: runOut(run) };
}

export async function getRun(deps: EvaluatorServiceDeps, p: Principal, id: string, runId: string) {
  // The evaluator (its access check) and the run in one snapshot.
  return inSnapshot(deps.sql, async (tx) => {
    const e = await evaluatorRowIn(tx, p, id);
    if (!/^[0-9a-f-]{36}$/i.test(runId)) throw notFound("no such run");
    const [run] =
      await tx`select * from evaluation_runs where id = ${runId} and evaluator_id = ${e.id} and tenant_id = ${p.tenantId}`;
    if (!run) throw notFound("no such run");
    return runOut(run);
  });
}
