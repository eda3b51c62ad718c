ALTER TABLE "sessions" ADD COLUMN "published_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "published_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "sessions_unpublished_idx" ON "sessions" USING btree ("matured_at") WHERE published_count < maturation_count;--> statement-breakpoint
CREATE INDEX "traces_service_start_idx" ON "traces" USING btree ("trace_service_id","start_time");--> statement-breakpoint
CREATE INDEX "traces_unpublished_idx" ON "traces" USING btree ("matured_at") WHERE published_count < maturation_count;--> statement-breakpoint
-- Rows matured before this column existed were published already.
UPDATE "sessions" SET "published_count" = "maturation_count";--> statement-breakpoint
UPDATE "traces" SET "published_count" = "maturation_count";
