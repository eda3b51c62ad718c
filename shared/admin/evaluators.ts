import type postgres from "postgres";
import { sqlOf, type Db } from "../db/client.ts";
import { AdminError, HttpError } from "../errors.ts";
import { budgetDay, setEvaluatorStatus as setStatus, spentToday } from "../evaluations/store.ts";
import {
  writeEvaluatorChanges,
  writeNewEvaluator,
  type CurrentEvaluator,
  type EvaluatorWriteDeps,
} from "../evaluations/write.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `admin evaluator list|pause|resume` (docs/evaluations.md): what an operator needs without the
 * dashboard: a tenant's evaluators with their state and today's spend (never the key), and
 * pausing or resuming one (a resume clears the reason the runner set, as the API's does), and
 * `create|edit` from a JSON file with the API's body, through the API's own writer
 * (shared/evaluations/write.ts).
 */
/** What every evaluator command prints of one (never the key). */
const summary = (r: postgres.Row) => ({
  id: r.id,
  service: r.service,
  name: r.name,
  version: r.version,
  target: r.target,
  kind: r.definition?.judge ? "judge" : "check",
  status: r.status,
  statusReason: r.status_reason,
});

export async function listEvaluators(db: Db, input: { tenantId: string; service?: string }) {
  if (!UUID.test(input.tenantId)) throw new AdminError("--tenant: not a tenant id");
  const sql = sqlOf(db);
  const rows = await sql`
    select e.id, e.name, e.version, e.target, e.status, e.status_reason, e.definition,
      to_char(e.budget_day, 'YYYY-MM-DD') as budget_day, e.budget_spent_usd, ts.name as service
    from evaluators e join trace_services ts on ts.id = e.trace_service_id and ts.tenant_id = e.tenant_id
    where e.tenant_id = ${input.tenantId} ${input.service ? sql`and ts.name = ${input.service}` : sql``}
    order by ts.name, e.name`;
  const now = new Date();
  return {
    day: budgetDay(now),
    evaluators: rows.map((r) => ({
      ...summary(r),
      spentTodayUsd: spentToday({ budget_day: r.budget_day, budget_spent_usd: r.budget_spent_usd }, now),
      dailyBudgetUsd: r.definition?.daily_budget_usd ?? null,
    })),
  };
}

export async function setEvaluatorStatus(db: Db, input: { id: string; status: "active" | "paused" }) {
  if (!UUID.test(input.id)) throw new AdminError("--id: not an evaluator id");
  const row = await setStatus(sqlOf(db), input.id, input.status);
  if (!row) throw new AdminError("no such evaluator", 404);
  return { id: row.id, name: row.name, status: row.status, statusReason: row.status_reason };
}

/** The writer's refusals (400 a field, 404, 409 a conflict, 503 no sealing key) as the CLI's errors. */
async function asAdmin<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof HttpError) {
      const status = err.status === 404 || err.status === 409 ? err.status : 400;
      throw new AdminError(err.message, status);
    }
    throw err;
  }
}

/** What the CLI prints for an evaluator it wrote (never the key: only whether it has one). */
async function written(db: Db, id: string) {
  const [r] = await sqlOf(db)`
    select e.id, e.name, e.version, e.target, e.status, e.status_reason, e.definition, e.key_encrypted is not null as has_api_key,
      ts.name as service
    from evaluators e join trace_services ts on ts.id = e.trace_service_id and ts.tenant_id = e.tenant_id where e.id = ${id}`;
  return { ...summary(r), hasApiKey: r.has_api_key, definition: r.definition };
}

/** The writer's deps: `sql` is a plain pool (createDatabase's `sql`; drizzle's client serializes JSON its own way). */
export type EvaluatorCliDeps = EvaluatorWriteDeps;

/** `evaluator create`: the body of `POST /api/v1/evaluators` without `service_name` (the --service flag). */
export async function createEvaluatorFromFile(
  db: Db,
  deps: EvaluatorCliDeps,
  input: { tenantId: string; service: string; body: unknown },
) {
  if (!UUID.test(input.tenantId)) throw new AdminError("--tenant: not a tenant id");
  if (typeof input.body !== "object" || input.body === null || Array.isArray(input.body))
    throw new AdminError("--file: must hold a JSON object (the API's evaluator body)");
  if ("service_name" in input.body)
    throw new AdminError("--file: service_name is given with --service, not in the file");
  const { sql } = deps;
  const [tenant] = await sql`select 1 from tenants where id = ${input.tenantId}`;
  if (!tenant) throw new AdminError("no such tenant", 404);
  const body = { ...input.body, service_name: input.service };
  const id = await asAdmin(() =>
    writeNewEvaluator(deps, input.tenantId, body, async (_definition, serviceName) => {
      const [svc] =
        await sql`select id from trace_services where tenant_id = ${input.tenantId} and name = ${serviceName}`;
      if (!svc) throw new AdminError(`--service: no such service ${JSON.stringify(serviceName)} in the tenant`, 404);
      return { id: svc.id as string };
    }),
  );
  return written(db, id);
}

/** `evaluator edit`: the body of `PUT /api/v1/evaluators/:id` (definition fields make a new version). */
export async function editEvaluatorFromFile(db: Db, deps: EvaluatorCliDeps, input: { id: string; body: unknown }) {
  if (!UUID.test(input.id)) throw new AdminError("--id: not an evaluator id");
  const { sql } = deps;
  const id = await asAdmin(() =>
    writeEvaluatorChanges(
      deps,
      input.body,
      async () => {
        const [row] = await sql<CurrentEvaluator[]>`
          select id, tenant_id, definition, key_encrypted, status, status_reason, status_changed_at
          from evaluators where id = ${input.id}`;
        if (!row) throw new AdminError("no such evaluator", 404);
        return row;
      },
      () => {},
      "paused by an operator",
    ),
  );
  return written(db, id);
}
