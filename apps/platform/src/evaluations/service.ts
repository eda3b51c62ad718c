import type postgres from "postgres";
import type { SecretBox } from "@cellar/shared/crypto";
import { badRequest, forbidden, HttpError, notFound, serviceUnavailable } from "@cellar/shared/errors";
import {
  buildDefinition,
  EvaluatorCreate,
  EvaluatorUpdate,
  type EvaluatorDefinition,
} from "@cellar/shared/evaluations/definition";
import { compileValidator } from "@cellar/shared/validation";
import { toCidrs, type Cidr } from "@cellar/shared/webhooks/address";
import { checkDestination, systemResolveDns, type ResolveDns } from "@cellar/shared/webhooks/destination";
import { hasRole, resolveService, type Principal } from "../auth/principal.ts";
import type { PlatformDeps } from "../deps.ts";
import { evaluationOut, evaluatorOut } from "./model.ts";

/** Evaluators per service: enough for every judge a team runs, few enough that each maturation stays cheap. */
export const MAX_EVALUATORS_PER_SERVICE = 20;

const conflict = (message: string) => new HttpError(409, message);
const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
const createValidator = compileValidator(EvaluatorCreate);
const updateValidator = compileValidator(EvaluatorUpdate);

export interface EvaluatorServiceDeps {
  sql: postgres.Sql;
  secretBox?: SecretBox;
  resolveDns: ResolveDns;
  allowlist: Cidr[];
  now: () => Date;
}

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

async function judgeUrlProblem(deps: EvaluatorServiceDeps, d: EvaluatorDefinition): Promise<void> {
  if (!d.judge) return;
  const check = await checkDestination(d.judge.url, { resolveDns: deps.resolveDns, allowlist: deps.allowlist });
  if (!check.ok) throw badRequest(`invalid judge.url: ${check.message}`);
}

async function seal(deps: EvaluatorServiceDeps, key: string, id: string) {
  if (!deps.secretBox) throw serviceUnavailable("secret sealing is not configured on this server", 60);
  return deps.secretBox.seal(key, id);
}

export async function listEvaluators(deps: EvaluatorServiceDeps, p: Principal, serviceName?: string) {
  const svc = serviceName ? await resolveService(deps.sql, p, serviceName) : null;
  const projects = hasRole(p, "admin")
    ? null
    : (await deps.sql`select project_id from project_memberships where user_id = ${p.userId}`).map((r) => r.project_id);
  const rows = await deps.sql.unsafe(
    `${SELECT} where e.tenant_id = $1 ${svc ? "and e.trace_service_id = $2" : ""} order by ts.name, e.name`,
    (svc ? [p.tenantId, svc.id] : [p.tenantId]) as never[],
  );
  const now = deps.now();
  return {
    evaluators: rows.filter((r) => !projects || projects.includes(r.project_id)).map((r) => evaluatorOut(r, now)),
  };
}

/** Another tenant's evaluator is indistinguishable from a missing one. */
export async function getEvaluatorRow(deps: EvaluatorServiceDeps, p: Principal, id: string) {
  if (!isUuid(id)) throw notFound("no such evaluator");
  const [row] = await deps.sql.unsafe(`${SELECT} where e.tenant_id = $1 and e.id = $2`, [p.tenantId, id]);
  if (!row) throw notFound("no such evaluator");
  if (!hasRole(p, "admin")) {
    const member = await deps.sql`
      select 1 from project_memberships where user_id = ${p.userId} and project_id = ${row.project_id}`;
    if (!member.length) throw forbidden("your project membership does not cover this service");
  }
  return row;
}

export async function getEvaluator(deps: EvaluatorServiceDeps, p: Principal, id: string) {
  return evaluatorOut(await getEvaluatorRow(deps, p, id), deps.now());
}

export async function createEvaluator(deps: EvaluatorServiceDeps, p: Principal, body: unknown) {
  const problem = createValidator.firstError(body);
  if (problem) throw badRequest(problem);
  const input = body as EvaluatorCreate;
  const { service_name, name, api_key, status, ...fields } = input;
  const definition = buildDefinition(fields);
  if (typeof definition === "string") throw badRequest(definition);
  requireWriter(p, definition);
  const svc = await resolveService(deps.sql, p, service_name);
  await judgeUrlProblem(deps, definition);
  const id = crypto.randomUUID();
  // The row id is the key's associated data, so it is chosen before sealing.
  const sealed = api_key ? await seal(deps, api_key, id) : null;
  const now = deps.now();
  await deps.sql.begin(async (tx) => {
    await tx`select id from trace_services where id = ${svc.id} and tenant_id = ${p.tenantId} for update`;
    const [{ n }] = await tx`select count(*)::int as n from evaluators where trace_service_id = ${svc.id}`;
    if (n >= MAX_EVALUATORS_PER_SERVICE)
      throw conflict(`the service already has ${MAX_EVALUATORS_PER_SERVICE} evaluators; delete one to free a slot`);
    const [taken] = await tx`select 1 from evaluators where trace_service_id = ${svc.id} and name = ${name}`;
    if (taken) throw conflict(`the service already has an evaluator named ${JSON.stringify(name)}`);
    await tx`
      insert into evaluators (id, tenant_id, trace_service_id, name, version, target, definition, key_encrypted, status, status_reason, created_at, updated_at)
      values (${id}, ${p.tenantId}, ${svc.id}, ${name}, 1, ${definition.target}, ${tx.json(definition as never)}, ${sealed},
        ${status ?? "active"}, ${status === "paused" ? "created paused" : null}, ${now}, ${now})`;
    await tx`
      insert into evaluator_versions (evaluator_id, tenant_id, version, definition, created_at)
      values (${id}, ${p.tenantId}, 1, ${tx.json(definition as never)}, ${now})`;
  });
  return getEvaluator(deps, p, id);
}

/**
 * Changes an evaluator. Any definition field makes a new version (results name the version that
 * made them); a new key or a status alone does not. `status: active` also lifts a pause the
 * runner set (a refused key), clearing its reason.
 */
export async function updateEvaluator(deps: EvaluatorServiceDeps, p: Principal, id: string, body: unknown) {
  const problem = updateValidator.firstError(body);
  if (problem) throw badRequest(problem);
  const current = await getEvaluatorRow(deps, p, id);
  const { api_key, status, ...fields } = body as EvaluatorUpdate;
  requireWriter(p, current.definition);
  const changes = Object.keys(fields).length > 0;
  const definition = changes ? buildDefinition(fields, current.definition) : current.definition;
  if (typeof definition === "string") throw badRequest(definition);
  requireWriter(p, definition);
  if (changes) await judgeUrlProblem(deps, definition);
  const sealed = api_key ? await seal(deps, api_key, id) : current.key_encrypted;
  const now = deps.now();
  await deps.sql.begin(async (tx) => {
    const [row] = await tx`
      update evaluators set
        version = version + ${changes ? 1 : 0}, target = ${definition.target}, definition = ${tx.json(definition as never)},
        key_encrypted = ${sealed}, updated_at = ${now},
        status = ${status ?? current.status},
        status_reason = ${status === "active" ? null : status === "paused" ? "paused by a user" : current.status_reason},
        status_changed_at = ${status && status !== current.status ? now : current.status_changed_at}
      where id = ${id} and tenant_id = ${p.tenantId} returning version`;
    if (changes)
      await tx`
        insert into evaluator_versions (evaluator_id, tenant_id, version, definition, created_at)
        values (${id}, ${p.tenantId}, ${row.version}, ${tx.json(definition as never)}, ${now})`;
  });
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
  const e = await getEvaluatorRow(deps, p, id);
  const rows = await deps.sql`
    select * from evaluations where evaluator_id = ${e.id} and tenant_id = ${p.tenantId}
      ${q.status ? deps.sql`and status = ${q.status}` : deps.sql``}
    order by created_at desc, id desc limit ${q.limit}`;
  return { evaluations: rows.map((r) => evaluationOut(r, e.definition.output.kind)) };
}
