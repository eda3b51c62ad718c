-- Per-service detector thresholds (admin CLI `detectors set`), merged over the defaults at maturation.
CREATE TABLE "detector_settings" (
	"trace_service_id" uuid PRIMARY KEY NOT NULL REFERENCES "trace_services"("id") ON DELETE cascade,
	"tenant_id" uuid NOT NULL REFERENCES "tenants"("id") ON DELETE cascade,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
-- A session whose maturation fails is retried with backoff, then parked as failed (docs/maturation.md).
ALTER TABLE "sessions" ADD COLUMN "maturation_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "maturation_retry_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "maturation_failed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "maturation_error" text;--> statement-breakpoint
CREATE INDEX "sessions_maturation_failed_idx" ON "sessions" ("maturation_failed_at") WHERE "maturation_failed_at" IS NOT NULL;
