import type { Static } from "elysia";
import type { Db } from "@cellar/shared/db/client";
import { KEY_KINDS, type Role } from "@cellar/shared/db/schema";
import { AdminError, badRequest, forbidden, HttpError } from "@cellar/shared/errors";
import { listMembers, updateUserProjects, updateUserRole } from "@cellar/shared/admin/operators";
import { createInvitation } from "@cellar/shared/admin/signin";
import { createProject, createService, deprovisionUser } from "@cellar/shared/admin/tenancy";
import { createApiKey, revokeApiKey, updateApiKey } from "@cellar/shared/auth/key-store";
import { hasRole, type Principal } from "../auth/principal.ts";
import type * as m from "./model.ts";

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

const INGEST_KINDS = KEY_KINDS.filter((k) => k !== "platform");

async function memberRole(db: Db, tenantId: string, id: string): Promise<Role | undefined> {
  return (await listMembers(db, { tenantId })).find((u) => u.id === id)?.role;
}

function invitationView(inv: Awaited<ReturnType<typeof createInvitation>>) {
  return { userId: inv.userId, token: inv.token, path: inv.path, expiresAt: inv.expiresAt };
}

export function addProject(db: Db, p: Principal, body: Static<typeof m.NewProject>) {
  requireAdmin(p);
  return adminCall(() => createProject(db, { tenantId: p.tenantId, name: body.name }));
}

export function addService(db: Db, p: Principal, body: Static<typeof m.NewService>) {
  requireAdmin(p);
  return adminCall(() => createService(db, { tenantId: p.tenantId, name: body.name, projectId: body.projectId }));
}

/** An invitation for a new member; its token is answered only here. */
export async function inviteMember(db: Db, p: Principal, body: Static<typeof m.NewMember>) {
  requireRoleChangeAllowed(p, undefined, body.role);
  const inv = await adminCall(() =>
    createInvitation(db, {
      tenantId: p.tenantId,
      email: body.email.trim(),
      role: body.role,
      projectIds: body.projectIds,
    }),
  );
  return invitationView(inv);
}

/** A new invitation link for an existing member. */
export async function reinviteMember(db: Db, p: Principal, id: string) {
  requireRoleChangeAllowed(p, await memberRole(db, p.tenantId, id), undefined);
  return invitationView(await adminCall(() => createInvitation(db, { tenantId: p.tenantId, userId: id })));
}

/** A member's role, project memberships or both (the role rules above; not your own role). */
export async function changeMember(db: Db, p: Principal, id: string, body: Static<typeof m.MemberPatch>) {
  if (body.role === undefined && body.projectIds === undefined)
    throw badRequest("invalid body: give role, projectIds or both");
  const current = await memberRole(db, p.tenantId, id);
  requireRoleChangeAllowed(p, current, body.role);
  if (body.role !== undefined && body.role !== current) requireNotSelf(p, id, "change the role of");
  const role =
    body.role === undefined
      ? undefined
      : await adminCall(() => updateUserRole(db, { id, role: body.role!, tenantId: p.tenantId }));
  const projects =
    body.projectIds === undefined
      ? undefined
      : await adminCall(() => updateUserProjects(db, { id, projectIds: body.projectIds!, tenantId: p.tenantId }));
  return { id, ...(role && { role: role.role }), ...(projects && { projects: projects.projects }) };
}

export async function deprovisionMember(db: Db, p: Principal, id: string) {
  requireRoleChangeAllowed(p, await memberRole(db, p.tenantId, id), undefined);
  requireNotSelf(p, id, "deprovision");
  return adminCall(() => deprovisionUser(db, { id, tenantId: p.tenantId }));
}

/** A telemetry key or DSN; DSNs other than plain telemetry keys carry the ingest host's public URL. */
export function addIngestKey(db: Db, p: Principal, body: Static<typeof m.NewIngestKey>, ingestPublicUrl?: string) {
  requireAdmin(p);
  return adminCall(() =>
    createApiKey(db, {
      kind: body.kind,
      tenantId: p.tenantId,
      serviceName: body.serviceName,
      name: body.name,
      origins: body.allowedOrigins,
      endpoint: body.kind === "telemetry" ? undefined : ingestPublicUrl || undefined,
    }),
  );
}

export function changeIngestKey(db: Db, p: Principal, id: string, body: Static<typeof m.KeyPatch>) {
  requireAdmin(p);
  if (body.name === undefined && body.allowedOrigins === undefined)
    throw badRequest("invalid body: give name, allowedOrigins or both");
  return adminCall(() => updateApiKey(db, { id, tenantId: p.tenantId, name: body.name, origins: body.allowedOrigins }));
}

export async function revokeIngestKey(db: Db, p: Principal, id: string): Promise<void> {
  requireAdmin(p);
  await adminCall(() => revokeApiKey(db, { id, tenantId: p.tenantId, kinds: INGEST_KINDS }));
}
