import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { apiKeys, projectMemberships, projects, traceServices, users } from "../db/schema/index.ts";
import { AdminError } from "../errors.ts";

/**
 * Operator reads and the one membership edit behind the admin CLI's `project list`,
 * `user update --projects` and `key list`. Never returns a key or its hash: keys are shown once.
 */
export async function listProjects(db: Db, input: { tenantId: string }) {
  mustBeId(input.tenantId, "--tenant");
  const rows = await db
    .select({ id: projects.id, name: projects.name, isDefault: projects.isDefault, createdAt: projects.createdAt })
    .from(projects)
    .where(eq(projects.tenantId, input.tenantId))
    .orderBy(asc(projects.createdAt), asc(projects.name));
  const services = await db
    .select({ projectId: traceServices.projectId, name: traceServices.name })
    .from(traceServices)
    .where(eq(traceServices.tenantId, input.tenantId));
  return rows.map((p) => ({
    ...p,
    services: services
      .filter((s) => s.projectId === p.id)
      .map((s) => s.name)
      .sort(),
  }));
}

/** Replaces the user's project memberships with exactly `projectIds` (empty = none). */
export async function updateUserProjects(db: Db, input: { id: string; projectIds: string[] }) {
  mustBeId(input.id, "--id");
  for (const p of input.projectIds) mustBeId(p, "--projects");
  return db.transaction(async (tx) => {
    const [u] = await tx
      .select({ id: users.id, tenantId: users.tenantId })
      .from(users)
      .where(eq(users.id, input.id))
      .for("update");
    if (!u) throw new AdminError(`no user ${input.id}`);
    const wanted = [...new Set(input.projectIds)];
    if (wanted.length) {
      const found = await tx
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.tenantId, u.tenantId), inArray(projects.id, wanted)));
      const missing = wanted.filter((id) => !found.some((f) => f.id === id));
      if (missing.length) throw new AdminError(`no project ${missing[0]} in the user's tenant ${u.tenantId}`);
    }
    await tx.delete(projectMemberships).where(eq(projectMemberships.userId, u.id));
    if (wanted.length)
      await tx.insert(projectMemberships).values(wanted.map((projectId) => ({ userId: u.id, projectId })));
    return { id: u.id, projects: wanted.sort() };
  });
}

/** Every key of a tenant: id, kind, display prefix, owner or service, state. */
export async function listKeys(db: Db, input: { tenantId: string }) {
  mustBeId(input.tenantId, "--tenant");
  const rows = await db
    .select({
      id: apiKeys.id,
      kind: apiKeys.kind,
      prefix: apiKeys.displayPrefix,
      userId: apiKeys.userId,
      serviceName: apiKeys.serviceName,
      origins: apiKeys.allowedOrigins,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.tenantId, input.tenantId))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map((k) => ({ ...k, revoked: k.revokedAt !== null }));
}

function mustBeId(id: string, flag: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
    throw new AdminError(`${flag} ${JSON.stringify(id)} is not an id`);
}
