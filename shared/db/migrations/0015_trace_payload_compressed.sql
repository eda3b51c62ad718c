-- Trace payloads compressed by the app (issue 28, docs/performance.md "Payloads compressed by the
-- app"): a new trace's payload goes to `trace_payloads` (the JSON text, keys in jsonb order,
-- deflated), written once and never updated; the trace row keeps a null jsonb `payload`.
-- Postgres neither parses nor pglz-compresses it (EXTERNAL: stored as is, out of line when
-- large). A row of its own rather than a column of `traces`: a deflated payload (~1.2 KB) is
-- under the TOAST threshold, so it would stay inline and be copied by both updates of a trace
-- row after its maturation.
-- Rows written before keep their jsonb `payload` until the processor's backfill moves them in
-- small batches while ingesting goes on (apps/processor/src/upgrade/payload-backfill.ts); every
-- read takes either. What reads computed from the jsonb in SQL becomes a column written with the
-- row: the token sums of the responses, and whether an OTLP call still waits for its messages.
-- No table rewrite; one index build (below).
-- Its key includes tenant_id (every new key does: test/tenant-keys.test.ts, docs/scaling.md),
-- after trace_pk so the cascade from a deleted trace finds its row through the key.
CREATE TABLE "trace_payloads" (
	"tenant_id" uuid NOT NULL,
	"trace_pk" uuid NOT NULL REFERENCES "traces"("id") ON DELETE CASCADE,
	"payload_z" bytea NOT NULL,
	CONSTRAINT "trace_payloads_pkey" PRIMARY KEY ("trace_pk", "tenant_id")
);--> statement-breakpoint
ALTER TABLE "trace_payloads" ALTER COLUMN "payload_z" SET STORAGE EXTERNAL;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "payload" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "prompt_tokens" bigint;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "completion_tokens" bigint;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "total_tokens" bigint;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "awaits_messages" boolean;--> statement-breakpoint
-- The rows still to move, for the backfill's walk: empty after it, and never touched by new rows
-- (their payload is null). Building it reads the table once (on an upgraded database: about as
-- long as one sequential scan of traces; trace writes wait for it).
CREATE INDEX "traces_jsonb_payload_idx" ON "traces" USING btree ("id") WHERE "payload" IS NOT NULL;
