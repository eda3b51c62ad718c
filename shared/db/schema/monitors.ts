import { sql } from "drizzle-orm";
import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  type PgColumn,
  pgTable,
  primaryKey,
  text,
  uuid,
} from "drizzle-orm/pg-core";
import { requiredUuid, serviceFk, tenantId, traceServiceId, ts } from "./columns.ts";
import { tenantForeignKey } from "./tenant-keys.ts";

const monitorId = () => requiredUuid("monitor_id");
/** The monitor's foreign key, widened by tenant_id (migration 0019). */
const monitorFk = (table: string, t: { monitorId: PgColumn; tenantId: PgColumn }) =>
  tenantForeignKey(`${table}_monitor_id_fkey`, { column: t.monitorId, tenantId: t.tenantId }, monitors);
/** The monitor's, filled from it (migration 0019): keys and foreign keys include it. */
const monitorTenantId = () => requiredUuid("tenant_id");

/** A monitor's definition and its state (migration 0014, docs/monitors.md). */
export const monitors = pgTable(
  "monitors",
  {
    id: uuid("id").notNull().defaultRandom(),
    tenantId: tenantId(),
    traceServiceId: traceServiceId(),
    name: text("name").notNull(),
    entity: text("entity", { enum: ["session", "trace"] }).notNull(),
    metric: text("metric").notNull(),
    metricArg: text("metric_arg"),
    filters: jsonb("filters").$type<Record<string, string>>().notNull().default({}),
    windowSeconds: integer("window_seconds").notNull(),
    direction: text("direction", { enum: ["above", "below"] }).notNull(),
    threshold: doublePrecision("threshold").notNull(),
    warningThreshold: doublePrecision("warning_threshold"),
    hysteresis: doublePrecision("hysteresis").notNull().default(0),
    minSamples: integer("min_samples").notNull().default(1),
    enabled: boolean("enabled").notNull().default(true),
    /** Written only by shared/monitors/state-machine.ts's transitions. */
    state: text("state", { enum: ["ok", "warning", "alert"] })
      .notNull()
      .default("ok"),
    stateSince: ts("state_since").notNull().defaultNow(),
    transitions: integer("transitions").notNull().default(0),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "monitors_pkey", columns: [t.id, t.tenantId] }),
    serviceFk("monitors_trace_service_id_fkey", t),
    index("monitors_service_idx").on(t.traceServiceId).where(sql`enabled`),
    index("monitors_tenant_idx").on(t.tenantId),
  ],
);

export const monitorSamples = pgTable(
  "monitor_samples",
  {
    monitorId: monitorId(),
    tenantId: monitorTenantId(),
    entityPk: uuid("entity_pk").notNull(),
    at: ts("at").notNull(),
    value: doublePrecision("value").notNull(),
  },
  (t) => [
    primaryKey({ name: "monitor_samples_pk", columns: [t.monitorId, t.entityPk, t.tenantId] }),
    monitorFk("monitor_samples", t),
    index("monitor_samples_window_idx").on(t.monitorId, t.at),
  ],
);

/** State changes (history) and the outbox of their notifications. */
export const monitorEvents = pgTable(
  "monitor_events",
  {
    monitorId: monitorId(),
    seq: integer("seq").notNull(),
    tenantId: monitorTenantId(),
    transition: text("transition").notNull(),
    fromState: text("from_state").notNull(),
    toState: text("to_state").notNull(),
    eventType: text("event_type"),
    value: doublePrecision("value").notNull(),
    samples: integer("samples").notNull(),
    occurredAt: ts("occurred_at").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>(),
    publishedAt: ts("published_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "monitor_events_pk", columns: [t.monitorId, t.seq, t.tenantId] }),
    monitorFk("monitor_events", t),
    index("monitor_events_unpublished_idx").on(t.createdAt).where(sql`event_type is not null and published_at is null`),
  ],
);

export const monitorPoints = pgTable(
  "monitor_points",
  {
    monitorId: monitorId(),
    tenantId: monitorTenantId(),
    bucket: ts("bucket").notNull(),
    value: doublePrecision("value"),
    samples: integer("samples").notNull(),
    state: text("state").notNull(),
  },
  (t) => [
    primaryKey({ name: "monitor_points_pk", columns: [t.monitorId, t.bucket, t.tenantId] }),
    monitorFk("monitor_points", t),
  ],
);
