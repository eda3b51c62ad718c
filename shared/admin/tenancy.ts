import { and, eq } from "drizzle-orm";
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
import { generateKey } from "../auth/keys.ts";

/** Operations behind the admin CLI (the stand-in for the dashboard's settings pages). */
export class AdminError extends Error {
  override name = "AdminError";
}

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
  await mustFindTenant(db, input.tenantId);
  const [p] = await db
    .insert(projects)
    .values({ tenantId: input.tenantId, name: input.name })
    .onConflictDoNothing()
    .returning({ id: projects.id });
  if (!p) throw new AdminError(`project ${JSON.stringify(input.name)} already exists in this tenant`);
  return p;
}

export async function createService(db: Db, input: { tenantId: string; name: string; projectId?: string }) {
  await mustFindTenant(db, input.tenantId);
  const projectId = input.projectId ?? (await defaultProjectId(db, input.tenantId));
  const [proj] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, projectId), eq(projects.tenantId, input.tenantId)));
  if (!proj) throw new AdminError(`no project ${projectId} in tenant ${input.tenantId}`);
  const [svc] = await db
    .insert(traceServices)
    .values({ tenantId: input.tenantId, projectId, name: input.name })
    .onConflictDoNothing()
    .returning({ id: traceServices.id });
  if (!svc) throw new AdminError(`service ${JSON.stringify(input.name)} already exists in this tenant`);
  return svc;
}

export async function createUser(
  db: Db,
  input: { tenantId: string; email: string; role: Role; projectIds?: string[] },
) {
  await mustFindTenant(db, input.tenantId);
  if (!ROLES.includes(input.role)) throw new AdminError(`--role must be one of ${ROLES.join(", ")}`);
  if (!/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new AdminError("--email is not an email address");
  return db.transaction(async (tx) => {
    const [u] = await tx
      .insert(users)
      .values({ tenantId: input.tenantId, email: input.email, role: input.role })
      .onConflictDoNothing()
      .returning({ id: users.id });
    if (!u) throw new AdminError(`user ${input.email} already exists in this tenant`);
    for (const projectId of input.projectIds ?? []) {
      const [proj] = await tx
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.id, projectId), eq(projects.tenantId, input.tenantId)));
      if (!proj) throw new AdminError(`no project ${projectId} in tenant ${input.tenantId}`);
      await tx.insert(projectMemberships).values({ userId: u.id, projectId }).onConflictDoNothing();
    }
    return u;
  });
}

export async function deprovisionUser(db: Db, input: { id: string }) {
  const rows = await db
    .update(users)
    .set({ deprovisionedAt: new Date() })
    .where(eq(users.id, input.id))
    .returning({ id: users.id });
  if (!rows.length) throw new AdminError(`no user ${input.id}`);
  return rows[0];
}

export async function createApiKey(
  db: Db,
  input: {
    kind: KeyKind;
    tenantId?: string;
    userId?: string;
    serviceName?: string;
    origins?: string[];
    /** The ingest host's public URL, carried by a DSN (INGEST_PUBLIC_URL); without it: a legacy DSN. */
    endpoint?: string;
  },
) {
  let tenantId = input.tenantId;
  if (input.kind === "platform") {
    if (!input.userId) throw new AdminError("platform keys need --user");
    const [u] = await db
      .select({ tenantId: users.tenantId, gone: users.deprovisionedAt })
      .from(users)
      .where(eq(users.id, input.userId));
    if (!u) throw new AdminError(`no user ${input.userId}`);
    if (u.gone) throw new AdminError("user is deprovisioned");
    tenantId = u.tenantId;
  } else {
    if (!tenantId) throw new AdminError(`${input.kind} keys need --tenant`);
    await mustFindTenant(db, tenantId);
    if (input.kind !== "telemetry" && !input.serviceName) throw new AdminError(`${input.kind} keys need --service`);
  }
  if (input.origins?.length && input.kind !== "dsn-client")
    throw new AdminError("--origins applies to dsn-client keys only");
  for (const o of input.origins ?? []) {
    let ok = false;
    try {
      const u = new URL(o);
      ok = (u.protocol === "https:" || u.protocol === "http:") && u.origin === o;
    } catch {}
    if (!ok) throw new AdminError(`--origins: ${JSON.stringify(o)} is not an origin like https://app.example.com`);
  }
  const { key, keyHash, displayPrefix } = await generateKey(input.kind, {
    endpoint: input.endpoint,
    serviceName: input.serviceName,
  });
  const [row] = await db
    .insert(apiKeys)
    .values({
      tenantId: tenantId!,
      userId: input.kind === "platform" ? input.userId : null,
      kind: input.kind,
      keyHash,
      displayPrefix,
      serviceName: input.kind === "telemetry" || input.kind === "platform" ? null : input.serviceName,
      allowedOrigins: input.origins?.length ? input.origins : null,
    })
    .returning({ id: apiKeys.id });
  return { id: row.id, key };
}

export async function revokeApiKey(db: Db, input: { id: string }) {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(eq(apiKeys.id, input.id))
    .returning({ id: apiKeys.id });
  if (!rows.length) throw new AdminError(`no key ${input.id}`);
  return rows[0];
}

async function mustFindTenant(db: Db, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new AdminError(`--tenant ${JSON.stringify(id)} is not a tenant id`);
  const [t] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, id));
  if (!t) throw new AdminError(`no tenant ${id}`);
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
