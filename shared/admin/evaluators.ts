import { sqlOf, type Db } from "../db/client.ts";
import { AdminError } from "../errors.ts";
import { budgetDay, setEvaluatorStatus as setStatus, spentToday } from "../evaluations/store.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `admin evaluator list|pause|resume` (docs/evaluations.md): what an operator needs without the
 * dashboard: a tenant's evaluators with their state and today's spend (never the key), and
 * pausing or resuming one (a resume clears the reason the runner set, as the API's does).
 * Evaluators are created and edited through the platform API or the dashboard.
 */
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
      id: r.id,
      service: r.service,
      name: r.name,
      version: r.version,
      target: r.target,
      kind: r.definition?.judge ? "judge" : "check",
      status: r.status,
      statusReason: r.status_reason,
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
