import type { Db } from "@cellar/shared/db/client";
import { created, type Resource, type ResourceDeps, resource } from "../http/resource.ts";
import { strictBody } from "../http/filters.ts";
import { doc } from "../http/schemas.ts";
import { readIngestKeys, readMembers, readOrganization } from "../query/org.ts";
import * as m from "./model.ts";
import * as svc from "./service.ts";

const TAG = "Organization";
const NOTE = "Beyond the contract: the dashboard's organization settings (docs/dashboard.md).";

export interface OrgRouteDeps extends ResourceDeps {
  db: Db;
  ingestPublicUrl?: string;
}

/**
 * /organization: projects and services, members and invitations, telemetry keys and DSNs. Every
 * write calls the same shared function as the admin CLI (shared/admin), scoped to the caller's
 * tenant; the role rules are in service.ts.
 */
export function orgRoutes(deps: OrgRouteDeps) {
  return resource(deps, "/organization")
    .use((app) => projectRoutes(app, deps))
    .use((app) => memberRoutes(app, deps))
    .use((app) => keyRoutes(app, deps));
}

/** The organization with its projects and services, and creating those. */
function projectRoutes(app: Resource, { db }: OrgRouteDeps) {
  return app
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
    .post("/projects", async ({ principal, body, set }) => created(set, await svc.addProject(db, principal, body)), {
      body: m.NewProject,
      transform: strictBody(m.NewProject),
      detail: doc(TAG, "Create a project (admin, owner)", m.Created, {
        status: 201,
        errors: [400, 401, 403, 409],
      }),
    })
    .post("/services", async ({ principal, body, set }) => created(set, await svc.addService(db, principal, body)), {
      body: m.NewService,
      transform: strictBody(m.NewService),
      detail: doc(TAG, "Create a trace service in a project (admin, owner)", m.Created, {
        status: 201,
        errors: [400, 401, 403, 404, 409],
        description: `Without projectId: the default project. Ingestion also creates a service on its first trace. ${NOTE}`,
      }),
    });
}

/** Members and their invitations, roles and projects. */
function memberRoutes(app: Resource, { db }: OrgRouteDeps) {
  return app
    .get("/members", ({ principal }) => readMembers(db, principal.tenantId), {
      detail: doc(TAG, "Members with role, projects and state (every role)", m.MemberList, { errors: [401] }),
    })
    .post("/members", async ({ principal, body, set }) => created(set, await svc.inviteMember(db, principal, body)), {
      body: m.NewMember,
      transform: strictBody(m.NewMember),
      detail: doc(TAG, "Invite a member: the invitation link's token is returned only here", m.Invitation, {
        status: 201,
        errors: [400, 401, 403, 404, 409],
        description: `Admin or owner; only an owner invites an owner. 409 when the email is already a member. ${NOTE}`,
      }),
    })
    .post(
      "/members/:id/invitation",
      async ({ principal, params, set }) => created(set, await svc.reinviteMember(db, principal, params.id)),
      {
        params: m.IdParams,
        detail: doc(TAG, "A new invitation link for an existing member (admin, owner)", m.Invitation, {
          status: 201,
        }),
      },
    )
    .patch("/members/:id", ({ principal, params, body }) => svc.changeMember(db, principal, params.id, body), {
      params: m.IdParams,
      body: m.MemberPatch,
      transform: strictBody(m.MemberPatch),
      detail: doc(TAG, "Change a member's role or project memberships", m.MemberChanged, {
        errors: [400, 401, 403, 404, 409],
        description: `Admin or owner; only an owner grants or changes the owner role; not your own role; the last owner stays owner (409). projectIds replaces the memberships. ${NOTE}`,
      }),
    })
    .post("/members/:id/deprovision", ({ principal, params }) => svc.deprovisionMember(db, principal, params.id), {
      params: m.IdParams,
      detail: doc(TAG, "Deprovision a member: their sign-ins and platform keys stop working", m.Created, {
        errors: [400, 401, 403, 404, 409],
        description: `Admin or owner (an owner for an owner); not yourself; the last owner stays (409). ${NOTE}`,
      }),
    });
}

/** Telemetry keys and DSNs. */
function keyRoutes(app: Resource, { db, ingestPublicUrl }: OrgRouteDeps) {
  return app
    .get("/keys", ({ principal }) => readIngestKeys(db, principal), {
      detail: doc(TAG, "Telemetry keys and DSNs (admin, owner); never the secret", m.IngestKeyList, {
        errors: [401, 403],
        description: `lastUsedAt is written at most once a minute per key. ${NOTE}`,
      }),
    })
    .post(
      "/keys",
      async ({ principal, body, set }) => created(set, await svc.addIngestKey(db, principal, body, ingestPublicUrl)),
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
    .patch("/keys/:id", ({ principal, params, body }) => svc.changeIngestKey(db, principal, params.id, body), {
      params: m.IdParams,
      body: m.KeyPatch,
      transform: strictBody(m.KeyPatch),
      detail: doc(TAG, "Rename a key, or replace a client DSN's allowed origins (empty = any)", m.KeyChanged, {
        description: `Takes effect on the ingest host within its key cache's TTL (2 s). ${NOTE}`,
      }),
    })
    .delete(
      "/keys/:id",
      async ({ principal, params, set }) => {
        await svc.revokeIngestKey(db, principal, params.id);
        set.status = 204;
      },
      {
        params: m.IdParams,
        detail: doc(TAG, "Revoke a telemetry key or DSN (within 2 s everywhere)", m.Created, { status: 204 }),
      },
    );
}
