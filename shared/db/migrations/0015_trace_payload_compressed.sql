-- Trace payloads compressed by the app (issue 28, docs/performance.md "Payloads compressed by the
-- app"): new rows carry `payload_z` (the JSON text, keys in jsonb order, deflated) and leave the
-- jsonb `payload` null; Postgres neither parses nor pglz-compresses it (EXTERNAL: stored as is).
-- Rows written before keep their jsonb `payload` until the processor's backfill moves them in
-- small batches while ingesting goes on (apps/processor/src/upgrade/payload-backfill.ts); every
-- read takes either. What reads computed from the jsonb in SQL becomes a column written with the
-- row: the token sums of the responses, and whether an OTLP call still waits for its messages.
-- Only catalog changes here (no table rewrite, no scan): the constraint is added NOT VALID and
-- validated in its own statement, which does not block writes.
ALTER TABLE "traces" ADD COLUMN "payload_z" bytea;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "payload_z" SET STORAGE EXTERNAL;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "payload" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "prompt_tokens" bigint;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "completion_tokens" bigint;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "total_tokens" bigint;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "awaits_messages" boolean;--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_payload_present" CHECK ("payload" IS NOT NULL OR "payload_z" IS NOT NULL) NOT VALID;--> statement-breakpoint
ALTER TABLE "traces" VALIDATE CONSTRAINT "traces_payload_present";
