import { Elysia } from "elysia";
import type { Db } from "@cellar/shared/db/client";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import { badRequest } from "@cellar/shared/errors";
import { listKeys, listMembers, updateUserProjects, updateUserRole } from "@cellar/shared/admin/operators";
import { createInvitation } from "@cellar/shared/admin/signin";
import { createProject, createService, deprovisionUser } from "@cellar/shared/admin/tenancy";
import { createApiKey, revokeApiKey, updateApiKey } from "@cellar/shared/auth/key-store";
import { KEY_KINDS, type Role } from "@cellar/shared/db/schema";
import { platformAuth } from "../auth/plugin.ts";
import type { SignInTokens } from "../auth/principal.ts";
import type { PlatformLimiter } from "../http/limits.ts";
import { strictBody } from "../http/filters.ts";
import { doc, iso, isoNN } from "../http/schemas.ts";
import * as m from "./model.ts";
import { adminCall, readOrganization, requireAdmin, requireNotSelf, requireRoleChangeAllowed } from "./service.ts";

const TAG = "Organization";
const INGEST_KINDS = KEY_KINDS.filter((k) => k !== "platform");
const NOTE = "Beyond the contract: the dashboard's organization settings (docs/dashboard.md).";

export interface OrgRouteDeps {
  db: Db;
  keys: KeyResolver;
  signIns?: SignInTokens;
  limiter?: PlatformLimiter;
  ingestPublicUrl?: string;
}

/**
 * /organization: projects and services, members and invitations, telemetry keys and DSNs. Every
 * write calls the same shared function as the admin CLI (shared/admin), scoped to the caller's
 * tenant; the role rules are in service.ts.
 */
export function orgRoutes(deps: OrgRouteDeps) {
  const { db } = deps;
  const memberRole = async (tenantId: string, id: string): Promise<Role | undefined> =>
    (await listMembers(db, { tenantId })).find((u) => u.id === id)?.role;
  return new Elysia({ prefix: "/organization" })
    .use(platformAuth(deps.keys, deps.limiter?.perKey, deps.signIns))
    .get("", ({ principal }) => readOrganization(db, principal), {
      detail: doc(
        TAG,
        "Your organization: plan, webhook entitlement, retention, projects and services",
        m.Organization,
        {
          errors: [401],
          description: `Every role; a viewer or member sees only the projects they belong to. ${NOTE}`,
        },
      ),
    })
    .post(
      "/projects",
      async ({ principal, body, set }) => {
        requireAdmin(principal);
        const created = await adminCall(() => createProject(db, { tenantId: principal.tenantId, name: body.name }));
        set.status = 201;
        return created;
      },
      {
        body: m.NewProject,
        transform: strictBody(m.NewProject),
        detail: doc(TAG, "Create a project (admin, owner)", m.Created, { status: 201, errors: [400, 401, 403] }),
      },
    )
    .post(
      "/services",
      async ({ principal, body, set }) => {
        requireAdmin(principal);
        const created = await adminCall(() =>
          createService(db, { tenantId: principal.tenantId, name: body.name, projectId: body.projectId }),
        );
        set.status = 201;
        return created;
      },
      {
        body: m.NewService,
        transform: strictBody(m.NewService),
        detail: doc(TAG, "Create a trace service in a project (admin, owner)", m.Created, {
          status: 201,
          errors: [400, 401, 403, 404],
          description: `Without projectId: the default project. Ingestion also creates a service on its first trace. ${NOTE}`,
        }),
      },
    )
    .get(
      "/members",
      async ({ principal }) => ({
        members: (await listMembers(db, { tenantId: principal.tenantId })).map((u) => ({
          id: u.id,
          email: u.email,
          role: u.role,
          projectIds: u.projectIds,
          state: u.state,
          createdAt: isoNN(u.createdAt),
        })),
      }),
      { detail: doc(TAG, "Members with role, projects and state (every role)", m.MemberList, { errors: [401] }) },
    )
    .post(
      "/members",
      async ({ principal, body, set }) => {
        requireRoleChangeAllowed(principal, undefined, body.role);
        const inv = await adminCall(() =>
          createInvitation(db, {
            tenantId: principal.tenantId,
            email: body.email.trim(),
            role: body.role,
            projectIds: body.projectIds,
          }),
        );
        set.status = 201;
        return { userId: inv.userId, token: inv.token, path: inv.path, expiresAt: inv.expiresAt };
      },
      {
        body: m.NewMember,
        transform: strictBody(m.NewMember),
        detail: doc(TAG, "Invite a member: the invitation link's token is returned only here", m.Invitation, {
          status: 201,
          errors: [400, 401, 403, 404],
          description: `Admin or owner; only an owner invites an owner. 409 when the email is already a member. ${NOTE}`,
        }),
      },
    )
    .post(
      "/members/:id/invitation",
      async ({ principal, params, set }) => {
        requireRoleChangeAllowed(principal, await memberRole(principal.tenantId, params.id), undefined);
        const inv = await adminCall(() => createInvitation(db, { tenantId: principal.tenantId, userId: params.id }));
        set.status = 201;
        return { userId: inv.userId, token: inv.token, path: inv.path, expiresAt: inv.expiresAt };
      },
      {
        params: m.IdParams,
        detail: doc(TAG, "A new invitation link for an existing member (admin, owner)", m.Invitation, {
          status: 201,
        }),
      },
    )
    .patch(
      "/members/:id",
      async ({ principal, params, body }) => {
        if (body.role === undefined && body.projectIds === undefined)
          throw badRequest("invalid body: give role, projectIds or both");
        const current = await memberRole(principal.tenantId, params.id);
        requireRoleChangeAllowed(principal, current, body.role);
        if (body.role !== undefined && body.role !== current)
          requireNotSelf(principal, params.id, "change the role of");
        const role =
          body.role === undefined
            ? undefined
            : await adminCall(() =>
                updateUserRole(db, { id: params.id, role: body.role!, tenantId: principal.tenantId }),
              );
        const projects =
          body.projectIds === undefined
            ? undefined
            : await adminCall(() =>
                updateUserProjects(db, { id: params.id, projectIds: body.projectIds!, tenantId: principal.tenantId }),
              );
        return { id: params.id, ...(role && { role: role.role }), ...(projects && { projects: projects.projects }) };
      },
      {
        params: m.IdParams,
        body: m.MemberPatch,
        transform: strictBody(m.MemberPatch),
        detail: doc(TAG, "Change a member's role or project memberships", m.MemberChanged, {
          description: `Admin or owner; only an owner grants or changes the owner role; not your own role; the last owner stays owner (409). projectIds replaces the memberships. ${NOTE}`,
        }),
      },
    )
    .post(
      "/members/:id/deprovision",
      async ({ principal, params }) => {
        requireRoleChangeAllowed(principal, await memberRole(principal.tenantId, params.id), undefined);
        requireNotSelf(principal, params.id, "deprovision");
        return adminCall(() => deprovisionUser(db, { id: params.id, tenantId: principal.tenantId }));
      },
      {
        params: m.IdParams,
        detail: doc(TAG, "Deprovision a member: their sign-ins and platform keys stop working", m.Created, {
          description: `Admin or owner (an owner for an owner); not yourself; the last owner stays (409). ${NOTE}`,
        }),
      },
    )
    .get(
      "/keys",
      async ({ principal }) => {
        requireAdmin(principal);
        const keys = (await listKeys(db, { tenantId: principal.tenantId })).filter((k) => k.kind !== "platform");
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
      },
      {
        detail: doc(TAG, "Telemetry keys and DSNs (admin, owner); never the secret", m.IngestKeyList, {
          errors: [401, 403],
          description: `lastUsedAt is written at most once a minute per key. ${NOTE}`,
        }),
      },
    )
    .post(
      "/keys",
      async ({ principal, body, set }) => {
        requireAdmin(principal);
        const created = await adminCall(() =>
          createApiKey(db, {
            kind: body.kind,
            tenantId: principal.tenantId,
            serviceName: body.serviceName,
            name: body.name,
            origins: body.allowedOrigins,
            endpoint: body.kind === "telemetry" ? undefined : deps.ingestPublicUrl || undefined,
          }),
        );
        set.status = 201;
        return created;
      },
      {
        body: m.NewIngestKey,
        transform: strictBody(m.NewIngestKey),
        detail: doc(TAG, "Create a telemetry key or DSN: the secret is returned only here", m.CreatedKey, {
          status: 201,
          errors: [400, 401, 403],
          description: `DSNs need serviceName; allowedOrigins (client DSNs only) are exact origins, compared with the browser's Origin header. ${NOTE}`,
        }),
      },
    )
    .patch(
      "/keys/:id",
      async ({ principal, params, body }) => {
        requireAdmin(principal);
        if (body.name === undefined && body.allowedOrigins === undefined)
          throw badRequest("invalid body: give name, allowedOrigins or both");
        return adminCall(() =>
          updateApiKey(db, {
            id: params.id,
            tenantId: principal.tenantId,
            name: body.name,
            origins: body.allowedOrigins,
          }),
        );
      },
      {
        params: m.IdParams,
        body: m.KeyPatch,
        transform: strictBody(m.KeyPatch),
        detail: doc(TAG, "Rename a key, or replace a client DSN's allowed origins (empty = any)", m.KeyChanged, {
          description: `Takes effect on the ingest host within its key cache's TTL (2 s). ${NOTE}`,
        }),
      },
    )
    .delete(
      "/keys/:id",
      async ({ principal, params, set }) => {
        requireAdmin(principal);
        await adminCall(() => revokeApiKey(db, { id: params.id, tenantId: principal.tenantId, kinds: INGEST_KINDS }));
        set.status = 204;
      },
      {
        params: m.IdParams,
        detail: doc(TAG, "Revoke a telemetry key or DSN (within 2 s everywhere)", m.Created, { status: 204 }),
      },
    );
}
