import { bigint, boolean, index, jsonb, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { requiredUuid, tenantId, ts } from "./columns.ts";
import { tenants } from "./tenancy.ts";

/** The ledger's counts per tenant, service, minute, stage and reason (migration 0030, docs/ledger.md). */
export const ledgerCounts = pgTable(
  "ledger_counts",
  {
    tenantId: tenantId(),
    serviceName: text("service_name").notNull(),
    minute: ts("minute").notNull(),
    stage: text("stage").notNull(),
    reason: text("reason").notNull().default(""),
    count: bigint("count", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ name: "ledger_counts_pkey", columns: [t.tenantId, t.serviceName, t.minute, t.stage, t.reason] }),
    // The reconciliation's window and the pruning (migration 0033).
    index("ledger_counts_minute_idx").on(t.minute),
  ],
);

/** Each SDK instance's last cumulative report (migration 0030): what makes a report idempotent. */
export const ledgerSdkInstances = pgTable(
  "ledger_sdk_instances",
  {
    tenantId: tenantId(),
    serviceName: text("service_name").notNull(),
    instanceId: text("instance_id").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    counts: jsonb("counts").$type<Record<string, number>>().notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "ledger_sdk_instances_pkey", columns: [t.tenantId, t.serviceName, t.instanceId] })],
);

/** The reconciliation's latest verdict per tenant (migration 0030, shared/ledger/reconcile.ts). */
export const ledgerChecks = pgTable("ledger_checks", {
  tenantId: uuid("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  checkedAt: ts("checked_at").notNull(),
  balanced: boolean("balanced").notNull(),
  unbalancedSince: ts("unbalanced_since"),
  details: jsonb("details").notNull(),
});

/**
 * Each INGEST dead letter the ledger counted (migrations 0038, 0039): its tenant and the identity
 * of the message it holds, its message id (`<INGEST stream>:<seq>[:<item>]`) and when JetStream
 * stored that message in INGEST, so the same message set aside twice (past DEAD_LETTERS's
 * duplicate window) is counted once. Inserted with the counts, so a dead letter is counted once
 * however often it is delivered (apps/processor/src/ledger/dead-letters.ts).
 */
export const ledgerDeadLetters = pgTable(
  "ledger_dead_letters",
  {
    // No foreign key: a dead letter of a tenant that does not exist is recorded once all the same.
    tenantId: requiredUuid("tenant_id"),
    origin: text("origin").notNull(),
    originAt: ts("origin_at").notNull(),
    countedAt: ts("counted_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "ledger_dead_letters_pkey", columns: [t.tenantId, t.origin, t.originAt] }),
    index("ledger_dead_letters_counted_at_idx").on(t.countedAt),
  ],
);
