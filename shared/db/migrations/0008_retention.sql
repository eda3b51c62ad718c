-- Per-tenant retention override (days); null = the plan's default from RETENTION_DAYS.
ALTER TABLE "tenants" ADD COLUMN "retention_days" integer;--> statement-breakpoint
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_retention_days_positive" CHECK ("retention_days" IS NULL OR "retention_days" >= 1);
