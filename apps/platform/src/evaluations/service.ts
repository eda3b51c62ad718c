import type postgres from "postgres";
import { forbidden, notFound } from "@cellar/shared/errors";
import type { EvaluatorDefinition } from "@cellar/shared/evaluations/definition";
import { writeEvaluatorChanges, writeNewEvaluator, type EvaluatorWriteDeps } from "@cellar/shared/evaluations/write";
import { toCidrs } from "@cellar/shared/webhooks/address";
import { systemResolveDns } from "@cellar/shared/webhooks/destination";
import { hasRole, resolveService, type Principal } from "../auth/principal.ts";
import type { PlatformDeps } from "../deps.ts";
import { inSnapshot } from "../query/snapshot.ts";
import { evaluationOut, evaluatorOut } from "./model.ts";

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

export type EvaluatorServiceDeps = EvaluatorWriteDeps;

export function evaluatorServiceDeps(deps: PlatformDeps): EvaluatorServiceDeps {
  const w = deps.webhooks ?? {};
  return {
    sql: deps.sql,
    secretBox: w.secretBox,
    resolveDns: w.resolveDns ?? systemResolveDns,
    allowlist: toCidrs(w.insecureAllowlist),
    now: w.now ?? (() => new Date()),
  };
}

/**
 * Who may change an evaluator (docs/evaluations.md, "Privacy"): member and above for checks,
 * which send nothing anywhere; admin and above for a judge, which sends the service's
 * conversations to a model endpoint. A viewer changes nothing.
 */
export function requireWriter(p: Principal, d: Pick<EvaluatorDefinition, "judge">) {
  if (!hasRole(p, "member")) throw forbidden("changing evaluators needs role member or higher");
  if (d.judge && !hasRole(p, "admin"))
    throw forbidden("an evaluator with a model judge sends conversations out: it needs role admin or higher");
}

const SELECT = `select e.*, to_char(e.budget_day, 'YYYY-MM-DD') as budget_day, ts.name as service_name, ts.project_id
  from evaluators e join trace_services ts on ts.id = e.trace_service_id and ts.tenant_id = e.tenant_id`;

/** The tenant's evaluators the principal can see (of one service when named), in one snapshot. */
export function listEvaluators(deps: EvaluatorServiceDeps, p: Principal, serviceName?: string) {
  return inSnapshot(deps.sql, async (sql) => {
    const svc = serviceName ? await resolveService(sql, p, serviceName) : null;
    const projects = hasRole(p, "admin")
      ? null
      : (await sql`select project_id from project_memberships where user_id = ${p.userId}`).map((r) => r.project_id);
    const rows = await sql.unsafe(
      `${SELECT} where e.tenant_id = $1 ${svc ? "and e.trace_service_id = $2" : ""} order by ts.name, e.name`,
      (svc ? [p.tenantId, svc.id] : [p.tenantId]) as never[],
    );
    const now = deps.now();
    return {
      evaluators: rows.filter((r) => !projects || projects.includes(r.project_id)).map((r) => evaluatorOut(r, now)),
    };
  });
}

/** Another tenant's evaluator is indistinguishable from a missing one. */
export async function evaluatorRowIn(sql: postgres.Sql | postgres.TransactionSql, p: Principal, id: string) {
  if (!isUuid(id)) throw notFound("no such evaluator");
  const [row] = await sql.unsafe(`${SELECT} where e.tenant_id = $1 and e.id = $2`, [p.tenantId, id]);
  if (!row) throw notFound("no such evaluator");
  if (!hasRole(p, "admin")) {
    const member = await sql`
      select 1 from project_memberships where user_id = ${p.userId} and project_id = ${row.project_id}`;
    if (!member.length) throw forbidden("your project membership does not cover this service");
  }
  return row;
}

export function getEvaluatorRow(deps: EvaluatorServiceDeps, p: Principal, id: string) {
  return evaluatorRowIn(deps.sql, p, id);
}

/** GET /evaluators/{id}: the row and the membership check in one snapshot. */
export async function getEvaluator(deps: EvaluatorServiceDeps, p: Principal, id: string) {
  return evaluatorOut(await inSnapshot(deps.sql, (tx) => evaluatorRowIn(tx, p, id)), deps.now());
}

export async function createEvaluator(deps: EvaluatorServiceDeps, p: Principal, body: unknown) {
  const id = await writeNewEvaluator(deps, p.tenantId, body, async (definition, serviceName) => {
    requireWriter(p, definition);
    return resolveService(deps.sql, p, serviceName);
  });
  return getEvaluator(deps, p, id);
}

/** Changes an evaluator (shared/evaluations/write.ts): definition fields make a new version. */
export async function updateEvaluator(deps: EvaluatorServiceDeps, p: Principal, id: string, body: unknown) {
  await writeEvaluatorChanges(
    deps,
    body,
    () => getEvaluatorRow(deps, p, id) as never,
    (d) => requireWriter(p, d),
  );
  return getEvaluator(deps, p, id);
}

/** Deletes an evaluator and its evaluations; the scores it made stay (they are the service's data). */
export async function deleteEvaluator(deps: EvaluatorServiceDeps, p: Principal, id: string) {
  const current = await getEvaluatorRow(deps, p, id);
  requireWriter(p, { judge: undefined });
  await deps.sql`delete from evaluators where id = ${current.id} and tenant_id = ${p.tenantId}`;
}

/** Its latest judgements, newest first (`status` narrows to scored or failed ones). */
export async function listEvaluations(
  deps: EvaluatorServiceDeps,
  p: Principal,
  id: string,
  q: { status?: "scored" | "failed"; limit: number },
) {
  // The evaluator (its access check and output kind) and its evaluations in one snapshot.
  return inSnapshot(deps.sql, async (tx) => {
    const e = await evaluatorRowIn(tx, p, id);
    const rows = await tx`
      select * from evaluations where evaluator_id = ${e.id} and tenant_id = ${p.tenantId}
        ${q.status ? tx`and status = ${q.status}` : tx``}
      order by created_at desc, id desc limit ${q.limit}`;
    return { evaluations: rows.map((r) => evaluationOut(r, e.definition.output.kind)) };
  });
}
