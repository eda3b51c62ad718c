-- Spans derived from the stored payload when read (issue 28, docs/otlp.md "Spans"): a new trace
-- writes no `spans` rows; every span read derives them from `trace_payloads` (shared/spans.ts,
-- the same function that wrote the rows). What a payload cannot answer is where a bare span id
-- lives (GET /telemetry/otel/spans/{spanId}): a span id is a hash of its trace id, so it cannot be
-- turned back into the trace. `span_ids` holds that one fact, narrow: the span id as the 64-bit
-- integer its 16 hex characters spell, and its trace. Its key leads with the service (the lookup
-- is always scoped to the caller's services) and includes tenant_id (test/tenant-keys.test.ts);
-- the trace_pk index serves the cascade from a deleted trace and the span counts of a session.
-- Traces written before keep their `spans` rows, and every read takes those first: their answers
-- stay byte for byte (test/upgrade-spans.test.ts). No backfill; no table rewrite.
CREATE TABLE "span_ids" (
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"span_id" bigint NOT NULL,
	"trace_pk" uuid NOT NULL REFERENCES "traces"("id") ON DELETE CASCADE,
	CONSTRAINT "span_ids_pkey" PRIMARY KEY ("trace_service_id", "span_id", "tenant_id")
);--> statement-breakpoint
CREATE INDEX "span_ids_trace_idx" ON "span_ids" USING btree ("trace_pk");
