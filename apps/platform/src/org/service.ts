import { eq } from "drizzle-orm";
import type { Db } from "@cellar/shared/db/client";
import { tenants, type Role } from "@cellar/shared/db/schema";
import { HttpError, forbidden } from "@cellar/shared/errors";
import { AdminError } from "@cellar/shared/errors";
import { listMembers, listProjects } from "@cellar/shared/admin/operators";
import { hasRole, type Principal } from "../auth/principal.ts";

/**
 * The organization settings' rules on top of the shared admin operations (shared/admin), which
 * the admin CLI calls too: who may do what. The same role ranks as the API (auth/principal.ts):
 * reads of the organization, its projects and members for every role (a viewer and a member see
 * only their own projects); keys and every write for admin and owner; owner-only: granting or
 * taking away the owner role, and deprovisioning an owner.
 */
export function requireAdmin(p: Principal) {
  if (!hasRole(p, "admin")) throw forbidden("managing the organization needs the admin or owner role");
}

/** Granting owner, or changing an owner, is for owners only. */
export function requireRoleChangeAllowed(p: Principal, targetRole: Role | undefined, newRole: Role | undefined) {
  requireAdmin(p);
  if ((targetRole === "owner" || newRole === "owner") && p.role !== "owner")
    throw forbidden("only an owner can grant the owner role or change an owner");
}

/** Not on yourself: another admin or owner does it (and the last owner is kept by the shared rule). */
export function requireNotSelf(p: Principal, userId: string, what: string) {
  if (p.userId === userId) throw forbidden(`you cannot ${what} yourself; another admin or owner can`);
}

const FIELD: Record<string, string> = {
  "--origins": "allowedOrigins",
  "--name": "name",
  "--service": "serviceName",
  "--projects": "projectIds",
  "--project": "projectId",
  "--role": "role",
  "--email": "email",
  "--id": "id",
};

/**
 * A shared admin operation, its AdminError answered as the API answers: the status it names,
 * and the CLI's flag (`--origins: ...`) named as the body field (`invalid allowedOrigins: ...`).
 */
export async function adminCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof AdminError)) throw err;
    const message = err.message.replace(/^(--[a-z-]+):? /, (_, flag: string) => `invalid ${FIELD[flag] ?? flag}: `);
    throw new HttpError(err.status, message);
  }
}

export async function readOrganization(db: Db, p: Principal) {
  const [tenant] = await db
    .select({
      id: tenants.id,
      name: tenants.name,
      plan: tenants.plan,
      webhooksEnabled: tenants.webhooksEnabled,
      retentionDays: tenants.retentionDays,
    })
    .from(tenants)
    .where(eq(tenants.id, p.tenantId));
  let projects = await listProjects(db, { tenantId: p.tenantId });
  if (!hasRole(p, "admin")) {
    const mine = (await listMembers(db, { tenantId: p.tenantId })).find((m) => m.id === p.userId)?.projectIds ?? [];
    projects = projects.filter((pr) => mine.includes(pr.id));
  }
  return {
    ...tenant,
    projects: projects.map(({ id, name, isDefault, services }) => ({ id, name, isDefault, services })),
  };
}
