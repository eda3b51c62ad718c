import { foreignKey, type PgColumn } from "drizzle-orm/pg-core";

/**
 * A foreign key widened by tenant_id (migration 0019, docs/scaling.md "Sharding by tenant"):
 * (column, tenant_id) -> parent (id, tenant_id), cascading deletes, so a Postgres distributed by
 * tenant can enforce it on one shard.
 */
export function tenantForeignKey(
  name: string,
  child: { column: PgColumn; tenantId: PgColumn },
  parent: { id: PgColumn; tenantId: PgColumn },
) {
  return foreignKey({
    name,
    columns: [child.column, child.tenantId],
    foreignColumns: [parent.id, parent.tenantId],
  }).onDelete("cascade");
}
