import { type PgColumn, timestamp, uuid } from "drizzle-orm/pg-core";
import { tenantForeignKey } from "./tenant-keys.ts";
import { tenants, traceServices } from "./tenancy.ts";

/**
 * The column helpers every schema file uses (tenancy.ts, which defines the tables they point at,
 * spells its own). Changing one changes every table that uses it: `bun x drizzle-kit generate`
 * must then say what migration that takes.
 */

/** A timestamptz column, read as a Date. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/** The row's tenant, with its own foreign key to tenants (deletes cascade from the tenant). */
export const tenantId = () =>
  uuid("tenant_id")
    .notNull()
    .references(() => tenants.id, { onDelete: "cascade" });

/**
 * A uuid column that is never null and has no foreign key of its own: a key that a composite
 * foreign key covers (serviceFk, tenantForeignKey), or a copy kept for filtering only.
 */
export const requiredUuid = (name: string) => uuid(name).notNull();

/** The row's service, by its id and the row's tenant (the widened key of migration 0019). */
export const traceServiceId = () => requiredUuid("trace_service_id");

/** The foreign key of `traceServiceId` to trace_services, widened by tenant_id (migration 0019). */
export const serviceFk = (name: string, t: { traceServiceId: PgColumn; tenantId: PgColumn }) =>
  tenantForeignKey(name, { column: t.traceServiceId, tenantId: t.tenantId }, traceServices);
