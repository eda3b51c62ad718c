import { eq } from "drizzle-orm";
import type { Db } from "@cellar/shared/db/client";
import { tenants } from "@cellar/shared/db/schema";
import { listKeys, listMembers, listProjects } from "@cellar/shared/admin/operators";
import { hasRole, type Principal } from "../auth/principal.ts";
import { iso, isoNN } from "../http/schemas.ts";
import { requireAdmin } from "../org/service.ts";

/**
 * Reads of /organization (beyond the contract: the dashboard's organization settings,
 * docs/dashboard.md). Each runs the shared admin listings (shared/admin, which the admin CLI
 * calls too); a read of several of them runs in one snapshot, so the projects a member sees and
 * the memberships that select them agree.
 */

/** Drizzle's form of query/snapshot.ts' inSnapshot: REPEATABLE READ, READ ONLY, one connection. */
function inDbSnapshot<T>(db: Db, read: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction((tx) => read(tx as unknown as Db), {
    isolationLevel: "repeatable read",
    accessMode: "read only",
  });
}

/** The tenant, and its projects with their services (a viewer or member: only their own). */
export function readOrganization(db: Db, p: Principal) {
  return inDbSnapshot(db, async (tx) => {
    const [tenant] = await tx
      .select({
        id: tenants.id,
        name: tenants.name,
        plan: tenants.plan,
        webhooksEnabled: tenants.webhooksEnabled,
        retentionDays: tenants.retentionDays,
      })
      .from(tenants)
      .where(eq(tenants.id, p.tenantId));
    let projects = await listProjects(tx, { tenantId: p.tenantId });
    if (!hasRole(p, "admin")) {
      const mine = (await listMembers(tx, { tenantId: p.tenantId })).find((m) => m.id === p.userId)?.projectIds ?? [];
      projects = projects.filter((pr) => mine.includes(pr.id));
    }
    return {
      ...tenant,
      projects: projects.map(({ id, name, isDefault, services }) => ({ id, name, isDefault, services })),
    };
  });
}

/** Members with role, projects and state (every role). */
export function readMembers(db: Db, tenantId: string) {
  return inDbSnapshot(db, async (tx) => ({
    members: (await listMembers(tx, { tenantId })).map((u) => ({
      id: u.id,
      email: u.email,
      role: u.role,
      projectIds: u.projectIds,
      state: u.state,
      createdAt: isoNN(u.createdAt),
    })),
  }));
}

/** The tenant's telemetry keys and DSNs (admin, owner), never a secret; platform keys are not listed. */
export async function readIngestKeys(db: Db, p: Principal) {
  requireAdmin(p);
  const keys = (await listKeys(db, { tenantId: p.tenantId })).filter((k) => k.kind !== "platform");
  return {
    keys: keys.map((k) => ({
      id: k.id,
      kind: k.kind,
      prefix: k.prefix,
      name: k.name,
      serviceName: k.serviceName,
      allowedOrigins: k.origins ?? [],
      createdAt: isoNN(k.createdAt),
      lastUsedAt: iso(k.lastUsedAt),
      revokedAt: iso(k.revokedAt),
    })),
  };
}
