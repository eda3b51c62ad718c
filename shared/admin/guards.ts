import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { tenants } from "../db/schema/index.ts";
import { AdminError } from "../errors.ts";
import { IDENTIFIER_PATTERN, LIMITS } from "../payloads.ts";

/**
 * Input checks shared by the writers behind the admin CLI and the dashboard's organization
 * settings (shared/admin/tenancy.ts, shared/auth/key-store.ts): one wording, one rule.
 */

/** Why `name` cannot be a trace service name (the ingestion payload's `service_name` rules), or null. */
export function serviceNameProblem(name: string): string | null {
  if (typeof name !== "string" || name.length < 1 || name.length > LIMITS.serviceName)
    return `must be 1 to ${LIMITS.serviceName} characters`;
  if (!new RegExp(IDENTIFIER_PATTERN).test(name)) return "must not be blank or contain control characters";
  return null;
}

/** `column = tenantId` when a tenant scope is given, else no condition. */
export function inTenant(column: Parameters<typeof eq>[0], tenantId: string | undefined) {
  return tenantId === undefined ? undefined : eq(column, tenantId);
}

export function mustBeUuid(id: string, flag: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
    throw new AdminError(`${flag} ${JSON.stringify(id)} is not an id`);
}

export async function mustFindTenant(db: Db, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new AdminError(`--tenant ${JSON.stringify(id)} is not a tenant id`);
  const [t] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, id));
  if (!t) throw new AdminError(`no tenant ${id}`);
}
