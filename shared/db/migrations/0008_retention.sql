-- Per-tenant retention override (days); null = the plan's default from RETENTION_DAYS.
ALTER TABLE "tenants" ADD COLUMN "retention_days" integer;--> statement-breakpoint
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_retention_days_positive" CHECK ("retention_days" IS NULL OR "retention_days" >= 1);
--> statement-breakpoint
-- Trace payloads out of line (TOAST, still compressed) for every new or updated row: a trace row
-- is updated twice after insert (matured, published) and each update copied the ~1.7 KB
-- compressed payload into a new tuple; now it copies a pointer. 6.5 -> 2.7 KB per trace row
-- with indexes, updates ~25% cheaper (bench/compression.ts). Existing rows are not rewritten.
ALTER TABLE "traces" SET (toast_tuple_target = 128);
