import { and, asc, eq, gt, inArray, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import {
  apiKeys,
  invitations,
  projectMemberships,
  projects,
  ROLES,
  traceServices,
  users,
  type Role,
} from "../db/schema/index.ts";
import { AdminError } from "../errors.ts";
import { mustBeUuid } from "./guards.ts";
import { mustKeepAnOwner } from "./tenancy.ts";

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

/**
 * Replaces the user's project memberships with exactly `projectIds` (empty = none).
 * `tenantId` scopes the lookup (the dashboard's own tenant).
 */
export async function updateUserProjects(db: Db, input: { id: string; projectIds: string[]; tenantId?: string }) {
  mustBeId(input.id, "--id");
  for (const p of input.projectIds) mustBeId(p, "--projects");
  return db.transaction(async (tx) => {
    const [u] = await tx
      .select({ id: users.id, tenantId: users.tenantId })
      .from(users)
      .where(and(eq(users.id, input.id), input.tenantId === undefined ? undefined : eq(users.tenantId, input.tenantId)))
      .for("update");
    if (!u) throw new AdminError(`no user ${input.id}`, 404);
    const wanted = [...new Set(input.projectIds)];
    if (wanted.length) {
      const found = await tx
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.tenantId, u.tenantId), inArray(projects.id, wanted)));
      const missing = wanted.filter((id) => !found.some((f) => f.id === id));
      if (missing.length) throw new AdminError(`no project ${missing[0]} in the user's tenant ${u.tenantId}`, 404);
    }
    await tx.delete(projectMemberships).where(eq(projectMemberships.userId, u.id));
    if (wanted.length)
      await tx
        .insert(projectMemberships)
        .values(wanted.map((projectId) => ({ userId: u.id, projectId, tenantId: u.tenantId })));
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
      name: apiKeys.name,
      lastUsedAt: apiKeys.lastUsedAt,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.tenantId, input.tenantId))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map((k) => ({ ...k, revoked: k.revokedAt !== null }));
}

const mustBeId = mustBeUuid;

/**
 * Changes a user's role. The tenant keeps at least one active owner (so the last owner cannot
 * step down). Who may grant what is the caller's rule (the platform: only an owner grants or
 * takes away owner); the CLI is the operator and may do either.
 */
export async function updateUserRole(db: Db, input: { id: string; role: Role; tenantId?: string }) {
  mustBeId(input.id, "--id");
  if (!ROLES.includes(input.role)) throw new AdminError(`--role must be one of ${ROLES.join(", ")}`);
  return db.transaction(async (tx) => {
    const [u] = await tx
      .select({ id: users.id, tenantId: users.tenantId, role: users.role })
      .from(users)
      .where(
        and(
          eq(users.id, input.id),
          isNull(users.deprovisionedAt),
          input.tenantId === undefined ? undefined : eq(users.tenantId, input.tenantId),
        ),
      )
      .for("update");
    if (!u) throw new AdminError(`no active user ${input.id}`, 404);
    if (u.role === "owner" && input.role !== "owner") await mustKeepAnOwner(tx, u.tenantId, u.id);
    await tx.update(users).set({ role: input.role }).where(eq(users.id, u.id));
    return { id: u.id, role: input.role };
  });
}

/**
 * The tenant's users with role, projects and state: `active` (has a password), `invited`
 * (an invitation is open, no password yet), `no-password` or `deprovisioned`.
 */
export async function listMembers(db: Db, input: { tenantId: string; now?: Date }) {
  mustBeId(input.tenantId, "--tenant");
  const rows = await db
    .select({
      id: users.id,
      email: users.email,
      role: users.role,
      createdAt: users.createdAt,
      deprovisionedAt: users.deprovisionedAt,
      hasPassword: users.passwordHash,
    })
    .from(users)
    .where(eq(users.tenantId, input.tenantId))
    .orderBy(asc(users.createdAt), asc(users.email));
  const ids = rows.map((r) => r.id);
  const memberships = ids.length
    ? await db
        .select({ userId: projectMemberships.userId, projectId: projectMemberships.projectId })
        .from(projectMemberships)
        .where(inArray(projectMemberships.userId, ids))
    : [];
  const open = ids.length
    ? await db
        .select({ userId: invitations.userId })
        .from(invitations)
        .where(
          and(
            inArray(invitations.userId, ids),
            isNull(invitations.acceptedAt),
            gt(invitations.expiresAt, input.now ?? new Date()),
          ),
        )
    : [];
  return rows.map(({ hasPassword, deprovisionedAt, ...u }) => ({
    ...u,
    projectIds: memberships
      .filter((m) => m.userId === u.id)
      .map((m) => m.projectId)
      .sort(),
    state: deprovisionedAt
      ? ("deprovisioned" as const)
      : hasPassword
        ? ("active" as const)
        : open.some((i) => i.userId === u.id)
          ? ("invited" as const)
          : ("no-password" as const),
    deprovisionedAt,
  }));
}
