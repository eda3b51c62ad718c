import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { tenantForeignKey } from "./tenant-keys.ts";

const createdAt = () => timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow();

/**
 * An organization. `plan` gates features (intents); `webhooksEnabled` is the webhook entitlement.
 * Deployment-wide, like users and api_keys: a reference table when sharded by tenant (docs/scaling.md).
 */
export const tenants = pgTable(
  "tenants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    plan: text("plan", { enum: ["free", "pro"] })
      .notNull()
      .default("free"),
    webhooksEnabled: boolean("webhooks_enabled").notNull().default(false),
    /** Days telemetry is kept; null = the plan's default (RETENTION_DAYS). docs/retention.md */
    retentionDays: integer("retention_days"),
    createdAt: createdAt(),
  },
  (t) => [check("tenants_retention_days_positive", sql`${t.retentionDays} IS NULL OR ${t.retentionDays} >= 1`)],
);

export const projects = pgTable(
  "projects",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Ingestion creates unknown services in the tenant's default project. */
    isDefault: boolean("is_default").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: "projects_pkey", columns: [t.id, t.tenantId] }),
    uniqueIndex("projects_tenant_name_uq").on(t.tenantId, t.name),
    uniqueIndex("projects_one_default_uq").on(t.tenantId).where(sql`${t.isDefault}`),
  ],
);

/** A trace service; its name is the `service_name` of payloads and `{serviceName}` in read paths. */
export const traceServices = pgTable(
  "trace_services",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    projectId: uuid("project_id").notNull(),
    name: text("name").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: "trace_services_pkey", columns: [t.id, t.tenantId] }),
    tenantForeignKey(
      "trace_services_project_id_projects_id_fk",
      { column: t.projectId, tenantId: t.tenantId },
      projects,
    ),
    uniqueIndex("trace_services_tenant_name_uq").on(t.tenantId, t.name),
  ],
);

export const ROLES = ["viewer", "member", "admin", "owner"] as const;
export type Role = (typeof ROLES)[number];

/** Sign-in finds a user by e-mail across tenants: a reference table when sharded (docs/scaling.md). */
export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: ROLES }).notNull(),
    deprovisionedAt: timestamp("deprovisioned_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
    /** Dashboard sign-in (argon2id, PHC string); null = no password yet (invite pending). */
    passwordHash: text("password_hash"),
    /** Consecutive failed sign-ins; from the 5th on each one locks the account a while longer. */
    failedSignIns: integer("failed_sign_ins").notNull().default(0),
    lockedUntil: timestamp("locked_until", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    uniqueIndex("users_tenant_email_uq").on(t.tenantId, t.email),
    index("users_email_lower_idx").on(sql`lower(${t.email})`),
  ],
);

/** Which projects a user can see. Admins and owners see every project of their tenant. */
export const projectMemberships = pgTable(
  "project_memberships",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    projectId: uuid("project_id").notNull(),
    /** The project's (migration 0019): the key and the project's foreign key include it. */
    tenantId: uuid("tenant_id").notNull(),
  },
  (t) => [
    primaryKey({ name: "project_memberships_pkey", columns: [t.userId, t.projectId, t.tenantId] }),
    tenantForeignKey(
      "project_memberships_project_id_projects_id_fk",
      { column: t.projectId, tenantId: t.tenantId },
      projects,
    ),
  ],
);

export const KEY_KINDS = ["telemetry", "dsn-server", "dsn-client", "platform"] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

/**
 * Every credential. Only the SHA-256 of the key is stored; the key is shown once at creation.
 * Found by its hash before the tenant is known: a reference table when sharded (docs/scaling.md).
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    /** Set for platform keys: the key acts as this user. */
    userId: uuid("user_id").references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: KEY_KINDS }).notNull(),
    keyHash: text("key_hash").notNull(),
    /** First characters of the key, for display in lists. */
    displayPrefix: text("display_prefix").notNull(),
    /** DSNs are bound to one trace service by name. */
    serviceName: text("service_name"),
    /** Client DSNs: browser origins allowed to use the key; null or empty = any. */
    allowedOrigins: text("allowed_origins").array(),
    /** A label chosen in the dashboard or with `key create --name` (telemetry keys and DSNs). */
    name: text("name"),
    /** Written by the key resolver at most once a minute per key (docs/dashboard.md). */
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("api_keys_hash_uq").on(t.keyHash), index("api_keys_tenant_idx").on(t.tenantId)],
);
