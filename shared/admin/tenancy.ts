import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import {
  apiKeys,
  projectMemberships,
  projects,
  ROLES,
  tenants,
  traceServices,
  users,
  type KeyKind,
  type Role,
} from "../db/schema/index.ts";
import { createApiKey, keyNameProblem } from "../auth/key-store.ts";
import { insertUser, markUserDeprovisioned } from "../auth/user-store.ts";
import { AdminError } from "../errors.ts";
import { inTenant, mustBeUuid, mustFindTenant, serviceNameProblem } from "./guards.ts";

/**
 * Operations behind the admin CLI and the dashboard's organization settings
 * (apps/platform/src/org): one implementation, called by both. An AdminError's `status` is what
 * the platform answers with (400 bad input, 404 no such row in the tenant, 409 a conflict).
 * API keys are written by shared/auth/key-store.ts, users by shared/auth/user-store.ts.
 */

export async function createTenant(db: Db, input: { name: string; plan?: "free" | "pro"; webhooks?: boolean }) {
  if (!input.name.trim()) throw new AdminError("--name must not be empty");
  return db.transaction(async (tx) => {
    const [tenant] = await tx
      .insert(tenants)
      .values({ name: input.name, plan: input.plan ?? "free", webhooksEnabled: input.webhooks ?? false })
      .returning({ id: tenants.id });
    const [project] = await tx
      .insert(projects)
      .values({ tenantId: tenant.id, name: "default", isDefault: true })
      .returning({ id: projects.id });
    // The default project's id: what `user create --projects` needs for a viewer to see anything.
    return { id: tenant.id, defaultProjectId: project.id };
  });
}

/** `retentionDays`: a number of days (>= 1), or null for the plan's default. */
export async function updateTenant(
  db: Db,
  input: { id: string; plan?: "free" | "pro"; webhooks?: boolean; retentionDays?: number | null },
) {
  const patch: Partial<typeof tenants.$inferInsert> = {};
  if (input.plan) patch.plan = input.plan;
  if (input.webhooks !== undefined) patch.webhooksEnabled = input.webhooks;
  if (input.retentionDays !== undefined) patch.retentionDays = input.retentionDays;
  if (Object.keys(patch).length === 0)
    throw new AdminError("nothing to update: give --plan, --webhooks or --retention-days");
  const rows = await db.update(tenants).set(patch).where(eq(tenants.id, input.id)).returning({
    id: tenants.id,
    plan: tenants.plan,
    webhooks: tenants.webhooksEnabled,
    retentionDays: tenants.retentionDays,
  });
  if (!rows.length) throw new AdminError(`no tenant ${input.id}`);
  return rows[0];
}

export async function createProject(db: Db, input: { tenantId: string; name: string }) {
  const problem = keyNameProblem(input.name) ?? (input.name.trim() ? null : "must not be blank");
  if (problem) throw new AdminError(`--name ${problem}`);
  await mustFindTenant(db, input.tenantId);
  const [p] = await db
    .insert(projects)
    .values({ tenantId: input.tenantId, name: input.name })
    .onConflictDoNothing()
    .returning({ id: projects.id });
  if (!p) throw new AdminError(`project ${JSON.stringify(input.name)} already exists in this tenant`, 409);
  return p;
}

export async function createService(db: Db, input: { tenantId: string; name: string; projectId?: string }) {
  const problem = serviceNameProblem(input.name);
  if (problem) throw new AdminError(`--name ${problem}`);
  if (input.projectId) mustBeUuid(input.projectId, "--project");
  await mustFindTenant(db, input.tenantId);
  const projectId = input.projectId ?? (await defaultProjectId(db, input.tenantId));
  const [proj] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, projectId), eq(projects.tenantId, input.tenantId)));
  if (!proj) throw new AdminError(`no project ${projectId} in tenant ${input.tenantId}`, 404);
  const [svc] = await db
    .insert(traceServices)
    .values({ tenantId: input.tenantId, projectId, name: input.name })
    .onConflictDoNothing()
    .returning({ id: traceServices.id });
  if (!svc) throw new AdminError(`service ${JSON.stringify(input.name)} already exists in this tenant`, 409);
  return svc;
}

export async function createUser(
  db: Db,
  input: { tenantId: string; email: string; role: Role; projectIds?: string[] },
) {
  await mustFindTenant(db, input.tenantId);
  if (!ROLES.includes(input.role)) throw new AdminError(`--role must be one of ${ROLES.join(", ")}`);
  if (input.email.length > 320 || !/^[^\s@]+@[^\s@]+$/.test(input.email))
    throw new AdminError("--email is not an email address");
  for (const p of input.projectIds ?? []) mustBeUuid(p, "--projects");
  return db.transaction(async (tx) => {
    const u = await insertUser(tx, input);
    if (!u) throw new AdminError(`user ${input.email} already exists in this tenant`, 409);
    for (const projectId of input.projectIds ?? []) {
      const [proj] = await tx
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.id, projectId), eq(projects.tenantId, input.tenantId)));
      if (!proj) throw new AdminError(`no project ${projectId} in tenant ${input.tenantId}`, 404);
      await tx
        .insert(projectMemberships)
        .values({ userId: u.id, projectId, tenantId: input.tenantId })
        .onConflictDoNothing();
    }
    return u;
  });
}

/**
 * Deprovisions a user: their platform keys and dashboard sign-ins stop working at once (both
 * are checked against `deprovisioned_at`). `tenantId` scopes the lookup (the dashboard's own
 * tenant); the last active owner of a tenant cannot be deprovisioned.
 */
export async function deprovisionUser(db: Db, input: { id: string; tenantId?: string }) {
  mustBeUuid(input.id, "--id");
  return db.transaction(async (tx) => {
    const [u] = await tx
      .select({ id: users.id, tenantId: users.tenantId, role: users.role })
      .from(users)
      .where(and(eq(users.id, input.id), isNull(users.deprovisionedAt), inTenant(users.tenantId, input.tenantId)))
      .for("update");
    if (!u) throw new AdminError(`no active user ${input.id}`, 404);
    if (u.role === "owner") await mustKeepAnOwner(tx, u.tenantId, u.id);
    await markUserDeprovisioned(tx, u.id, new Date());
    return { id: u.id };
  });
}

/** Refuses when `userId` is the tenant's last active owner (locks the owners' rows). */
export async function mustKeepAnOwner(tx: Pick<Db, "select">, tenantId: string, userId: string) {
  const owners = await tx
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.tenantId, tenantId), eq(users.role, "owner"), isNull(users.deprovisionedAt)))
    .for("update");
  if (!owners.some((o) => o.id !== userId))
    throw new AdminError("an organization keeps at least one owner: make another member owner first", 409);
}

async function defaultProjectId(db: Db, tenantId: string): Promise<string> {
  const [p] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.tenantId, tenantId), eq(projects.isDefault, true)));
  if (!p) throw new AdminError(`tenant ${tenantId} has no default project`);
  return p.id;
}

/** A tenant with an owner, a telemetry key and a platform key: what dev and tests start from. */
export async function bootstrapTenant(
  db: Db,
  input: { name: string; plan?: "free" | "pro"; webhooks?: boolean; email?: string },
) {
  const tenant = await createTenant(db, input);
  const owner = await createUser(db, { tenantId: tenant.id, email: input.email ?? "owner@example.com", role: "owner" });
  const telemetry = await createApiKey(db, { kind: "telemetry", tenantId: tenant.id });
  const platform = await createApiKey(db, { kind: "platform", userId: owner.id });
  return {
    tenantId: tenant.id,
    ownerId: owner.id,
    telemetryKey: telemetry.key,
    platformKey: platform.key,
    telemetryKeyId: telemetry.id,
    platformKeyId: platform.id,
  };
}
