import type postgres from "postgres";
import type { SecretBox } from "../crypto.ts";
import { badRequest, HttpError, serviceUnavailable } from "../errors.ts";
import { compileValidator } from "../validation.ts";
import type { Cidr } from "../webhooks/address.ts";
import { checkDestination, type ResolveDns } from "../webhooks/destination.ts";
import { buildDefinition, EvaluatorCreate, EvaluatorUpdate, type EvaluatorDefinition } from "./definition.ts";

/**
 * The one writer of an evaluator's definition (docs/evaluations.md): the platform API (after its
 * role checks) and the admin CLI (`evaluator create|edit`) both call it, so validation, the
 * per-service limit, the name conflict, the judge URL's SSRF rules, the key's sealing and the
 * version rows are the same. Errors are HttpErrors (400 names the field, 409 a conflict).
 */

/** Evaluators per service: enough for every judge a team runs, few enough that each maturation stays cheap. */
export const MAX_EVALUATORS_PER_SERVICE = 20;

const conflict = (message: string) => new HttpError(409, message);
const createValidator = compileValidator(EvaluatorCreate);
const updateValidator = compileValidator(EvaluatorUpdate);

export interface EvaluatorWriteDeps {
  sql: postgres.Sql;
  secretBox?: SecretBox;
  resolveDns: ResolveDns;
  allowlist: Cidr[];
  now: () => Date;
}

/** The stored row an edit starts from. */
export interface CurrentEvaluator {
  id: string;
  tenant_id: string;
  definition: EvaluatorDefinition;
  key_encrypted: string | null;
  status: "active" | "paused";
  status_reason: string | null;
  status_changed_at: Date | null;
}

async function judgeUrlProblem(deps: EvaluatorWriteDeps, d: EvaluatorDefinition): Promise<void> {
  if (!d.judge) return;
  const check = await checkDestination(d.judge.url, { resolveDns: deps.resolveDns, allowlist: deps.allowlist });
  if (!check.ok) throw badRequest(`invalid judge.url: ${check.message}`);
}

async function seal(deps: EvaluatorWriteDeps, key: string, id: string) {
  if (!deps.secretBox) throw serviceUnavailable("secret sealing is not configured on this server", 60);
  return deps.secretBox.seal(key, id);
}

/**
 * Creates an evaluator (version 1) from the body of `POST /evaluators`. `authorize` sees the
 * built definition before anything is looked up and answers the service's id (it throws when the
 * caller may not). Returns the new id.
 */
export async function writeNewEvaluator(
  deps: EvaluatorWriteDeps,
  tenantId: string,
  body: unknown,
  authorize: (definition: EvaluatorDefinition, serviceName: string) => Promise<{ id: string }>,
): Promise<string> {
  const problem = createValidator.firstError(body);
  if (problem) throw badRequest(problem);
  const { service_name, name, api_key, status, ...fields } = body as EvaluatorCreate;
  const definition = buildDefinition(fields);
  if (typeof definition === "string") throw badRequest(definition);
  const svc = await authorize(definition, service_name);
  await judgeUrlProblem(deps, definition);
  const id = crypto.randomUUID();
  // The row id is the key's associated data, so it is chosen before sealing.
  const sealed = api_key ? await seal(deps, api_key, id) : null;
  const now = deps.now();
  await deps.sql.begin(async (tx) => {
    await tx`select id from trace_services where id = ${svc.id} and tenant_id = ${tenantId} for update`;
    const [{ n }] = await tx`select count(*)::int as n from evaluators where trace_service_id = ${svc.id}`;
    if (n >= MAX_EVALUATORS_PER_SERVICE)
      throw conflict(`the service already has ${MAX_EVALUATORS_PER_SERVICE} evaluators; delete one to free a slot`);
    const [taken] = await tx`select 1 from evaluators where trace_service_id = ${svc.id} and name = ${name}`;
    if (taken) throw conflict(`the service already has an evaluator named ${JSON.stringify(name)}`);
    await tx`
      insert into evaluators (id, tenant_id, trace_service_id, name, version, target, definition, key_encrypted, status, status_reason, created_at, updated_at)
      values (${id}, ${tenantId}, ${svc.id}, ${name}, 1, ${definition.target}, ${tx.json(definition as never)}, ${sealed},
        ${status ?? "active"}, ${status === "paused" ? "created paused" : null}, ${now}, ${now})`;
    await tx`
      insert into evaluator_versions (evaluator_id, tenant_id, version, definition, created_at)
      values (${id}, ${tenantId}, 1, ${tx.json(definition as never)}, ${now})`;
  });
  return id;
}

/**
 * Changes an evaluator from the body of `PUT /evaluators/:id`. Any definition field makes a new
 * version (results name the version that made them); a new key or a status alone does not.
 * `status: active` also lifts a pause the runner set (a refused key), clearing its reason.
 * `load` reads the current row (after the body is validated); `authorize` sees the current and
 * then the new definition.
 */
export async function writeEvaluatorChanges(
  deps: EvaluatorWriteDeps,
  body: unknown,
  load: () => Promise<CurrentEvaluator>,
  authorize: (definition: Pick<EvaluatorDefinition, "judge">) => void,
  pausedReason = "paused by a user",
): Promise<string> {
  const problem = updateValidator.firstError(body);
  if (problem) throw badRequest(problem);
  const current = await load();
  const { id, tenant_id: tenantId } = current;
  const { api_key, status, ...fields } = body as EvaluatorUpdate;
  authorize(current.definition);
  const changes = Object.keys(fields).length > 0;
  const definition = changes ? buildDefinition(fields, current.definition) : current.definition;
  if (typeof definition === "string") throw badRequest(definition);
  authorize(definition);
  if (changes) await judgeUrlProblem(deps, definition);
  const sealed = api_key ? await seal(deps, api_key, id) : current.key_encrypted;
  const now = deps.now();
  await deps.sql.begin(async (tx) => {
    const [row] = await tx`
      update evaluators set
        version = version + ${changes ? 1 : 0}, target = ${definition.target}, definition = ${tx.json(definition as never)},
        key_encrypted = ${sealed}, updated_at = ${now},
        status = ${status ?? current.status},
        status_reason = ${status === "active" ? null : status === "paused" ? pausedReason : current.status_reason},
        status_changed_at = ${status && status !== current.status ? now : current.status_changed_at}
      where id = ${id} and tenant_id = ${tenantId} returning version`;
    if (changes)
      await tx`
        insert into evaluator_versions (evaluator_id, tenant_id, version, definition, created_at)
        values (${id}, ${tenantId}, ${row.version}, ${tx.json(definition as never)}, ${now})`;
  });
  return id;
}
