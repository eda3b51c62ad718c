-- The overview's rollups (issue 25, docs/dashboard.md, Overview), kept by the processor's
-- `processor-rollups` consumer of MATURED (apps/processor/src/rollups/). One row per service,
-- environment, bucket (5 minutes or 1 hour: `bucket_seconds`) and model ('' = the session-level
-- counts). `latency_hist` is a mergeable histogram of model-call durations over fixed log-scale
-- buckets (rollups/histogram.ts), so percentiles of any window are read from summed counts.
CREATE TABLE "overview_rollups" (
  "tenant_id" uuid NOT NULL,
  "trace_service_id" uuid NOT NULL REFERENCES "trace_services" ("id") ON DELETE CASCADE,
  "environment" text NOT NULL,
  "bucket_seconds" integer NOT NULL,
  "bucket_start" timestamp with time zone NOT NULL,
  "model" text NOT NULL,
  "sessions" integer NOT NULL DEFAULT 0,
  "error_sessions" integer NOT NULL DEFAULT 0,
  "problem_sessions" integer NOT NULL DEFAULT 0,
  "traces" integer NOT NULL DEFAULT 0,
  "cost_usd" double precision NOT NULL DEFAULT 0,
  "prompt_tokens" bigint NOT NULL DEFAULT 0,
  "completion_tokens" bigint NOT NULL DEFAULT 0,
  "latency_hist" integer[] NOT NULL,
  PRIMARY KEY ("trace_service_id", "bucket_seconds", "bucket_start", "environment", "model")
);--> statement-breakpoint
-- What one session contributed to the rollups, as of which maturation: a redelivered or replayed
-- MATURED message finds its maturation already applied and changes nothing; a later maturation
-- subtracts the old contribution and adds the new one (no foreign key: retention deleting the
-- session keeps the history it rolled up).
CREATE TABLE "overview_session_parts" (
  "session_pk" uuid PRIMARY KEY NOT NULL,
  "trace_service_id" uuid NOT NULL REFERENCES "trace_services" ("id") ON DELETE CASCADE,
  "maturation_count" integer NOT NULL,
  "matured_at" timestamp with time zone NOT NULL,
  "parts" jsonb NOT NULL
);
