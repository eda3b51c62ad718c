-- Issue 35, try before enabling (docs/evaluations.md, "Runs"): an evaluator version run on chosen
-- past matured sessions, as a dry run (results kept on the run only, no score) or a backfill
-- (scores stored like live ones), with its cost estimated before it starts and counted as it runs.
-- The dispatcher claims pending runs (its judge calls follow the webhook rules) and heartbeats them.
CREATE TABLE "evaluation_runs" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"evaluator_id" uuid NOT NULL,
	"evaluator_version" integer NOT NULL,
	"mode" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"session_ids" text[] NOT NULL,
	"next_index" integer DEFAULT 0 NOT NULL,
	"estimated_usd" double precision,
	"spent_usd" double precision DEFAULT 0 NOT NULL,
	"scored" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"results" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" text,
	"heartbeat_at" timestamp with time zone,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "evaluation_runs_pkey" PRIMARY KEY ("id", "tenant_id"),
	CONSTRAINT "evaluation_runs_evaluator_fkey" FOREIGN KEY ("evaluator_id", "tenant_id") REFERENCES "evaluators" ("id", "tenant_id") ON DELETE CASCADE,
	CONSTRAINT "evaluation_runs_mode_check" CHECK ("mode" IN ('dry_run', 'backfill')),
	CONSTRAINT "evaluation_runs_status_check" CHECK ("status" IN ('pending', 'running', 'done', 'stopped'))
);
--> statement-breakpoint
CREATE INDEX "evaluation_runs_open_idx" ON "evaluation_runs" USING btree ("created_at") WHERE "status" IN ('pending', 'running');--> statement-breakpoint
CREATE INDEX "evaluation_runs_evaluator_idx" ON "evaluation_runs" USING btree ("evaluator_id", "created_at");
