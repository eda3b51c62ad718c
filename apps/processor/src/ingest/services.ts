import type postgres from "postgres";

/**
 * Trace service ids by (tenant, name), creating the service in the tenant's default project
 * on first use (and the default project itself if the tenant has none yet).
 */
export async function resolveTraceServices(
  sql: postgres.Sql | postgres.TransactionSql,
  wanted: Array<{ tenantId: string; serviceName: string }>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const unique = [...new Map(wanted.map((w) => [serviceKey(w.tenantId, w.serviceName), w])).values()];
  if (unique.length === 0) return out;
  const tenantIds = unique.map((u) => u.tenantId);
  const names = unique.map((u) => u.serviceName);
  const found = await sql<{ id: string; tenant_id: string; name: string }[]>`
    select s.id, s.tenant_id, s.name from trace_services s
    join unnest(${sql.array(tenantIds)}::uuid[], ${sql.array(names)}::text[]) as w(tenant_id, name)
      on s.tenant_id = w.tenant_id and s.name = w.name`;
  for (const r of found) out.set(serviceKey(r.tenant_id, r.name), r.id);
  const missing = unique.filter((u) => !out.has(serviceKey(u.tenantId, u.serviceName)));
  for (const m of missing) {
    // Insert, else read. The read is its own statement: an insert that conflicts with a concurrent
    // creator waits for its commit, but a select in the same statement would still use the older
    // snapshot and miss the row; a new statement (read committed) sees it.
    const project =
      (
        await sql<{ id: string }[]>`
        insert into projects (tenant_id, name, is_default) values (${m.tenantId}, 'default', true)
        on conflict do nothing returning id`
      )[0] ??
      (await sql<{ id: string }[]>`select id from projects where tenant_id = ${m.tenantId} and is_default limit 1`)[0];
    const svc =
      (
        await sql<{ id: string }[]>`
        insert into trace_services (tenant_id, project_id, name) values (${m.tenantId}, ${project.id}, ${m.serviceName})
        on conflict (tenant_id, name) do nothing returning id`
      )[0] ??
      (
        await sql<
          { id: string }[]
        >`select id from trace_services where tenant_id = ${m.tenantId} and name = ${m.serviceName}`
      )[0];
    out.set(serviceKey(m.tenantId, m.serviceName), svc.id);
  }
  return out;
}

export const serviceKey = (tenantId: string, name: string) => `${tenantId}\u0000${name}`;
