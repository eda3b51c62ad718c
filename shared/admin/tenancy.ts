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
import { generateKey } from "../auth/keys.ts";
import { IDENTIFIER_PATTERN, LIMITS } from "../payloads.ts";

/**
 * Operations behind the admin CLI and the dashboard's organization settings
 * (apps/platform/src/org): one implementation, called by both. `status` is what the platform
 * answers with (400 bad input, 404 no such row in the tenant, 409 a conflict).
 */
export class AdminError extends Error {
  override name = "AdminError";
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

/** Most allowed origins a client DSN may list (each one is compared on every browser request). */
export const MAX_ALLOWED_ORIGINS = 50;

/**
 * Why `origin` is not an exact origin, or null. The ingest host compares a browser's `Origin`
 * header with each entry exactly (case-insensitively): scheme, host and port, no path, no
 * wildcard, no trailing slash. So `https://app.example.com` is allowed and
 * `https://app.example.com/`, `https://*.example.com` and `app.example.com` are not.
 */
export function originProblem(origin: string): string | null {
  if (typeof origin !== "string" || origin.length > 2048) return "must be a string of at most 2048 characters";
  try {
    const u = new URL(origin);
    if (u.protocol !== "https:" && u.protocol !== "http:") return "must start with https:// (or http://)";
    if (u.origin !== origin)
      return `is not an exact origin like https://app.example.com (scheme, host and optional port; no path, wildcard or trailing slash; did you mean ${JSON.stringify(u.origin)}?)`;
    return null;
  } catch {
    return "is not an origin like https://app.example.com";
  }
}

/** Why `name` cannot be a trace service name (the ingestion payload's `service_name` rules), or null. */
export function serviceNameProblem(name: string): string | null {
  if (typeof name !== "string" || name.length < 1 || name.length > LIMITS.serviceName)
    return `must be 1 to ${LIMITS.serviceName} characters`;
  if (!new RegExp(IDENTIFIER_PATTERN).test(name)) return "must not be blank or contain control characters";
  return null;
}

/** At most 200 characters, no control characters; blank means none. */
export function keyNameProblem(name: string): string | null {
  if (name.length > 200) return "must be at most 200 characters";
  if (/[\u0000-\u001f\u007f]/.test(name)) return "must not contain control characters";
  return null;
}

function checkOrigins(origins: string[]) {
  if (origins.length > MAX_ALLOWED_ORIGINS) throw new AdminError(`--origins: at most ${MAX_ALLOWED_ORIGINS} origins`);
  for (const o of origins) {
    const problem = originProblem(o);
    if (problem) throw new AdminError(`--origins: ${JSON.stringify(o)} ${problem}`);
  }
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
    const [u] = await tx
      .insert(users)
      .values({ tenantId: input.tenantId, email: input.email, role: input.role })
      .onConflictDoNothing()
      .returning({ id: users.id });
    if (!u) throw new AdminError(`user ${input.email} already exists in this tenant`, 409);
    for (const projectId of input.projectIds ?? []) {
      const [proj] = await tx
        .select({ id: projects.id })
        .from(projects)
        .where(and(eq(projects.id, projectId), eq(projects.tenantId, input.tenantId)));
      if (!proj) throw new AdminError(`no project ${projectId} in tenant ${input.tenantId}`, 404);
      await tx.insert(projectMemberships).values({ userId: u.id, projectId }).onConflictDoNothing();
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
    await tx.update(users).set({ deprovisionedAt: new Date() }).where(eq(users.id, u.id));
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

export async function createApiKey(
  db: Db,
  input: {
    kind: KeyKind;
    tenantId?: string;
    userId?: string;
    serviceName?: string;
    origins?: string[];
    name?: string;
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
    if (input.kind !== "telemetry") {
      if (!input.serviceName) throw new AdminError(`--service is required for ${input.kind} keys`);
      const problem = serviceNameProblem(input.serviceName);
      if (problem) throw new AdminError(`--service ${problem}`);
    }
  }
  if (input.origins?.length && input.kind !== "dsn-client")
    throw new AdminError("--origins applies to dsn-client keys only");
  checkOrigins(input.origins ?? []);
  const name = input.name?.trim() || null;
  const nameProblem = name && keyNameProblem(name);
  if (nameProblem) throw new AdminError(`--name ${nameProblem}`);
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
      name,
    })
    .returning({ id: apiKeys.id });
  return { id: row.id, key };
}

/**
 * `tenantId` scopes the lookup (the dashboard's own tenant), `kinds` the kinds it may revoke
 * (the organization's key page: telemetry keys and DSNs); revoking twice is a 404.
 */
export async function revokeApiKey(db: Db, input: { id: string; tenantId?: string; kinds?: KeyKind[] }) {
  mustBeUuid(input.id, "--id");
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(apiKeys.id, input.id),
        isNull(apiKeys.revokedAt),
        inTenant(apiKeys.tenantId, input.tenantId),
        input.kinds ? inArray(apiKeys.kind, input.kinds) : undefined,
      ),
    )
    .returning({ id: apiKeys.id });
  if (!rows.length) throw new AdminError(`no live key ${input.id}`, 404);
  return rows[0];
}

/**
 * Renames a telemetry key or DSN, or replaces a client DSN's allowed origins (empty = any
 * origin). The ingest host sees the change within its key cache's TTL (2 s).
 */
export async function updateApiKey(
  db: Db,
  input: { id: string; tenantId?: string; name?: string | null; origins?: string[] },
) {
  mustBeUuid(input.id, "--id");
  const patch: Partial<typeof apiKeys.$inferInsert> = {};
  if (input.name !== undefined) {
    const name = input.name?.trim() || null;
    const problem = name && keyNameProblem(name);
    if (problem) throw new AdminError(`--name ${problem}`);
    patch.name = name;
  }
  if (input.origins !== undefined) {
    checkOrigins(input.origins);
    patch.allowedOrigins = input.origins.length ? [...new Set(input.origins)] : null;
  }
  if (!Object.keys(patch).length) throw new AdminError("nothing to update: give --name or --origins");
  return db.transaction(async (tx) => {
    const [k] = await tx
      .select({ kind: apiKeys.kind })
      .from(apiKeys)
      .where(and(eq(apiKeys.id, input.id), isNull(apiKeys.revokedAt), inTenant(apiKeys.tenantId, input.tenantId)))
      .for("update");
    if (!k || k.kind === "platform") throw new AdminError(`no live telemetry key or DSN ${input.id}`, 404);
    if (input.origins?.length && k.kind !== "dsn-client")
      throw new AdminError("--origins applies to dsn-client keys only");
    const [row] = await tx.update(apiKeys).set(patch).where(eq(apiKeys.id, input.id)).returning({
      id: apiKeys.id,
      name: apiKeys.name,
      origins: apiKeys.allowedOrigins,
    });
    return row;
  });
}

/** `column = tenantId` when a tenant scope is given, else no condition. */
function inTenant(column: typeof users.tenantId | typeof apiKeys.tenantId, tenantId: string | undefined) {
  return tenantId === undefined ? undefined : eq(column, tenantId);
}

export function mustBeUuid(id: string, flag: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
    throw new AdminError(`${flag} ${JSON.stringify(id)} is not an id`);
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
