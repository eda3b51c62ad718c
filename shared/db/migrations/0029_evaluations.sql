-- Issue 35, evaluations (docs/evaluations.md): evaluators per service (a model judge or a
-- deterministic check), each edit a new version kept in evaluator_versions; one evaluation row per
-- (evaluator version, session or trace, transcript hash), the record that a transcript was judged
-- once; scores gain the `evaluator` source and say which evaluator version made them.
CREATE TABLE "evaluators" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL REFERENCES "tenants"("id") ON DELETE cascade,
	"trace_service_id" uuid NOT NULL,
	"name" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"target" text NOT NULL,
	"definition" jsonb NOT NULL,
	"key_encrypted" text,
	"status" text DEFAULT 'active' NOT NULL,
	"status_reason" text,
	"status_changed_at" timestamp with time zone,
	"budget_day" date,
	"budget_spent_usd" double precision DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evaluators_pkey" PRIMARY KEY ("id", "tenant_id"),
	CONSTRAINT "evaluators_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE,
	CONSTRAINT "evaluators_target_check" CHECK ("target" IN ('session', 'trace')),
	CONSTRAINT "evaluators_status_check" CHECK ("status" IN ('active', 'paused'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "evaluators_service_name_uq" ON "evaluators" USING btree ("trace_service_id", "name", "tenant_id");--> statement-breakpoint
CREATE TABLE "evaluator_versions" (
	"evaluator_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"definition" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evaluator_versions_pkey" PRIMARY KEY ("evaluator_id", "version", "tenant_id"),
	CONSTRAINT "evaluator_versions_evaluator_fkey" FOREIGN KEY ("evaluator_id", "tenant_id") REFERENCES "evaluators" ("id", "tenant_id") ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE "evaluations" (
	"id" uuid DEFAULT uuidv7() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"evaluator_id" uuid NOT NULL,
	"evaluator_version" integer NOT NULL,
	"target" text NOT NULL,
	"entity_id" text NOT NULL,
	"maturation_count" integer,
	"transcript_hash" text NOT NULL,
	"mode" text DEFAULT 'live' NOT NULL,
	"status" text NOT NULL,
	"score_id" uuid,
	"value" double precision,
	"label" text,
	"reason" text,
	"error" text,
	"injection_flagged" boolean DEFAULT false NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"input_tokens" integer,
	"output_tokens" integer,
	"cost_usd" double precision,
	"duration_ms" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evaluations_pkey" PRIMARY KEY ("id", "tenant_id"),
	CONSTRAINT "evaluations_evaluator_fkey" FOREIGN KEY ("evaluator_id", "tenant_id") REFERENCES "evaluators" ("id", "tenant_id") ON DELETE CASCADE,
	CONSTRAINT "evaluations_status_check" CHECK ("status" IN ('scored', 'failed')),
	CONSTRAINT "evaluations_mode_check" CHECK ("mode" IN ('live', 'backfill'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "evaluations_once_uq" ON "evaluations" USING btree ("evaluator_id", "evaluator_version", "target", "entity_id", "transcript_hash", "tenant_id");--> statement-breakpoint
CREATE INDEX "evaluations_evaluator_created_idx" ON "evaluations" USING btree ("evaluator_id", "created_at");--> statement-breakpoint
CREATE INDEX "evaluations_entity_idx" ON "evaluations" USING btree ("trace_service_id", "target", "entity_id");--> statement-breakpoint
ALTER TABLE "scores" DROP CONSTRAINT "scores_source_check";--> statement-breakpoint
ALTER TABLE "scores" ADD CONSTRAINT "scores_source_check" CHECK ("source" IN ('api', 'end_user', 'reviewer', 'evaluator'));--> statement-breakpoint
ALTER TABLE "scores" ADD COLUMN "evaluator_id" uuid;--> statement-breakpoint
ALTER TABLE "scores" ADD COLUMN "evaluator_version" integer;--> statement-breakpoint
ALTER TABLE "scores" ADD COLUMN "judge_input_tokens" integer;--> statement-breakpoint
ALTER TABLE "scores" ADD COLUMN "judge_output_tokens" integer;--> statement-breakpoint
ALTER TABLE "scores" ADD COLUMN "judge_cost_usd" double precision;
