import type postgres from "postgres";

/** A service's ledger counts summed per stage over every minute and reason: `{ stage: n }`. */
export async function stageCounts(
  sql: postgres.Sql,
  tenantId: string,
  service: string,
): Promise<Record<string, number>> {
  const rows = await sql<{ stage: string; n: number }[]>`
    select stage, sum(count)::int as n from ledger_counts
    where tenant_id = ${tenantId} and service_name = ${service} group by stage order by stage`;
  return Object.fromEntries(rows.map((r) => [r.stage, r.n]));
}
