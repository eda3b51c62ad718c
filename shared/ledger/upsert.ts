import type postgres from "postgres";

/** One row of ledger counts to add (minute as an ISO instant). */
export interface CountRow {
  tenant_id: string;
  service_name: string;
  minute: string;
  stage: string;
  reason: string;
  count: number;
}

/**
 * Adds counts to `ledger_counts` in one statement. Every writer of the table goes through here:
 * the counters' flushes and the ingest writer's transaction (which counts `stored` with the rows
 * it wrote, docs/ledger.md). The rows are locked in one key order in every caller (the ORDER BY),
 * so two writers adding to the same rows wait on each other instead of deadlocking. A deleted
 * tenant's counts are dropped (the join), not a statement that fails for ever.
 */
export function upsertCounts(
  sql: postgres.Sql | postgres.TransactionSql,
  rows: CountRow[],
): postgres.PendingQuery<postgres.Row[]> {
  return sql`
    insert into ledger_counts (tenant_id, service_name, minute, stage, reason, count)
    select x.tenant_id, x.service_name, x.minute, x.stage, x.reason, x.count
    from json_to_recordset(${sql.json(rows as any)}::json) as x(tenant_id uuid, service_name text, minute timestamptz, stage text, reason text, count bigint)
    join tenants t on t.id = x.tenant_id
    order by x.tenant_id, x.service_name, x.minute, x.stage, x.reason
    on conflict (tenant_id, service_name, minute, stage, reason) do update set count = ledger_counts.count + excluded.count`;
}
