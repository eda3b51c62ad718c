-- Scores (docs/scores.md): one judgement of a session or a trace, stored by natural key (service +
-- session id or trace id, no foreign key to the session or trace row) so a score that arrives
-- before what it names is kept and joins once the session or trace exists.
CREATE TABLE "scores" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL REFERENCES "tenants"("id") ON DELETE cascade,
	"trace_service_id" uuid NOT NULL REFERENCES "trace_services"("id") ON DELETE cascade,
	"target" text NOT NULL,
	"session_id" text,
	"trace_id" text,
	"name" text NOT NULL,
	"data_type" text NOT NULL,
	"value" double precision,
	"label" text,
	"comment" text,
	"source" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"author_user_id" uuid,
	"environment" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "scores_target_check" CHECK (("target" = 'session' AND "session_id" IS NOT NULL AND "trace_id" IS NULL) OR ("target" = 'trace' AND "trace_id" IS NOT NULL AND "session_id" IS NULL)),
	CONSTRAINT "scores_data_type_check" CHECK (("data_type" IN ('numeric', 'boolean') AND "value" IS NOT NULL AND "label" IS NULL) OR ("data_type" = 'categorical' AND "label" IS NOT NULL AND "value" IS NULL)),
	CONSTRAINT "scores_source_check" CHECK ("source" IN ('api', 'end_user', 'reviewer'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "scores_service_idempotency_uq" ON "scores" USING btree ("trace_service_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "scores_session_idx" ON "scores" USING btree ("trace_service_id","session_id","name") WHERE "session_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "scores_trace_idx" ON "scores" USING btree ("trace_service_id","trace_id","name") WHERE "trace_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "scores_tenant_created_idx" ON "scores" USING btree ("tenant_id","created_at");--> statement-breakpoint
-- Score names a service declares (the dashboard offers them; the platform API checks against them).
CREATE TABLE "score_configs" (
	"tenant_id" uuid NOT NULL REFERENCES "tenants"("id") ON DELETE cascade,
	"trace_service_id" uuid NOT NULL REFERENCES "trace_services"("id") ON DELETE cascade,
	"name" text NOT NULL,
	"data_type" text NOT NULL,
	"categories" text[],
	"min_value" double precision,
	"max_value" double precision,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "score_configs_pk" PRIMARY KEY ("trace_service_id","name"),
	CONSTRAINT "score_configs_data_type_check" CHECK ("data_type" IN ('numeric', 'boolean', 'categorical'))
);
