import { t } from "elysia";
import { KEY_KINDS, ROLES } from "@cellar/shared/db/schema";
import { LIMITS } from "@cellar/shared/payloads";
import { MAX_ALLOWED_ORIGINS } from "@cellar/shared/auth/key-store";
import { Iso, Nullable } from "../http/schemas.ts";

/** Schemas of /api/v1/organization (beyond the contract; docs/dashboard.md, Organization settings). */

const Id = t.String({ format: "uuid", error: "invalid id: must be a uuid" });
export const IdParams = t.Object({ id: Id });
const RoleSchema = t.Union(
  ROLES.map((r) => t.Literal(r)),
  { error: `invalid role: must be one of ${ROLES.join(", ")}` },
);
const IngestKind = t.Union(
  KEY_KINDS.filter((k) => k !== "platform").map((k) => t.Literal(k)),
  { error: "invalid kind: must be telemetry, dsn-server or dsn-client" },
);
const ProjectIds = t.Array(t.String({ format: "uuid", error: "invalid projectIds: each must be a project id" }), {
  maxItems: 1000,
  error: "invalid projectIds: must be an array of at most 1000 project ids",
});
const Origins = t.Array(t.String({ maxLength: 2048 }), {
  maxItems: MAX_ALLOWED_ORIGINS,
  error: `invalid allowedOrigins: must be an array of at most ${MAX_ALLOWED_ORIGINS} origins`,
});
const KeyName = t.String({ maxLength: 200, error: "invalid name: must be a string of at most 200 characters" });

export const Organization = t.Object({
  id: t.String(),
  name: t.String(),
  plan: t.String({ description: "Set by the provider (admin CLI `tenant update --plan`)" }),
  webhooksEnabled: t.Boolean({ description: "The webhook entitlement, set by the provider" }),
  retentionDays: Nullable(t.Integer({ description: "Days telemetry is kept; null = the plan's default" })),
  projects: t.Array(
    t.Object({
      id: t.String(),
      name: t.String(),
      isDefault: t.Boolean(),
      services: t.Array(t.String(), { description: "Trace service names, by name" }),
    }),
  ),
});

export const NewProject = t.Object(
  { name: t.String({ minLength: 1, maxLength: 200, error: "invalid name: must be 1 to 200 characters" }) },
  { additionalProperties: false },
);
export const NewService = t.Object(
  {
    name: t.String({
      minLength: 1,
      maxLength: LIMITS.serviceName,
      error: `invalid name: must be 1 to ${LIMITS.serviceName} characters`,
    }),
    projectId: t.Optional(Id),
  },
  { additionalProperties: false },
);
export const Created = t.Object({ id: t.String() });

export const Member = t.Object({
  id: t.String(),
  email: t.String(),
  role: t.String(),
  projectIds: t.Array(t.String()),
  state: t.String({ description: "active, invited, no-password or deprovisioned" }),
  createdAt: Iso,
});
export const MemberList = t.Object({ members: t.Array(Member) });
export const NewMember = t.Object(
  {
    email: t.String({ minLength: 3, maxLength: 320, error: "invalid email: must be an email address" }),
    role: RoleSchema,
    projectIds: t.Optional(ProjectIds),
  },
  { additionalProperties: false },
);
export const MemberPatch = t.Object(
  { role: t.Optional(RoleSchema), projectIds: t.Optional(ProjectIds) },
  { additionalProperties: false },
);
export const Invitation = t.Object({
  userId: t.String(),
  token: t.String({ description: "Shown once; the link is <dashboard>/invite#<token>" }),
  path: t.String(),
  expiresAt: Iso,
});
export const MemberChanged = t.Object({
  id: t.String(),
  role: t.Optional(t.String()),
  projects: t.Optional(t.Array(t.String())),
});

export const IngestKey = t.Object({
  id: t.String(),
  kind: t.String(),
  prefix: t.String(),
  name: Nullable(t.String()),
  serviceName: Nullable(t.String()),
  allowedOrigins: t.Array(t.String(), { description: "Client DSNs: empty = any origin" }),
  createdAt: Iso,
  lastUsedAt: Nullable(Iso),
  revokedAt: Nullable(Iso),
});
export const IngestKeyList = t.Object({ keys: t.Array(IngestKey) });
export const NewIngestKey = t.Object(
  {
    kind: IngestKind,
    serviceName: t.Optional(t.String({ maxLength: LIMITS.serviceName })),
    name: t.Optional(KeyName),
    allowedOrigins: t.Optional(Origins),
  },
  { additionalProperties: false },
);
export const CreatedKey = t.Object({
  id: t.String(),
  key: t.String({ description: "The telemetry key or DSN; returned only here" }),
});
export const KeyPatch = t.Object(
  { name: t.Optional(Nullable(KeyName)), allowedOrigins: t.Optional(Origins) },
  { additionalProperties: false },
);
export const KeyChanged = t.Object({
  id: t.String(),
  name: Nullable(t.String()),
  origins: Nullable(t.Array(t.String())),
});
