CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"user_id" uuid,
	"kind" text NOT NULL,
	"key_hash" text NOT NULL,
	"display_prefix" text NOT NULL,
	"service_name" text,
	"allowed_origins" text[],
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_memberships" (
	"user_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	CONSTRAINT "project_memberships_user_id_project_id_pk" PRIMARY KEY("user_id","project_id")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"plan" text DEFAULT 'free' NOT NULL,
	"webhooks_enabled" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trace_services" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"deprovisioned_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"session_pk" uuid NOT NULL,
	"session_id" text NOT NULL,
	"trace_id" text,
	"event_key" text NOT NULL,
	"name" text NOT NULL,
	"timestamp" timestamp with time zone NOT NULL,
	"severity_number" integer,
	"attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"body" jsonb,
	"environment" text,
	"ingested_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"session_id" text NOT NULL,
	"environment" text,
	"status" text DEFAULT 'active' NOT NULL,
	"first_activity_at" timestamp with time zone NOT NULL,
	"last_activity_at" timestamp with time zone NOT NULL,
	"last_ingested_at" timestamp with time zone NOT NULL,
	"maturation_count" integer DEFAULT 0 NOT NULL,
	"matured_at" timestamp with time zone,
	"activity_seq" bigint DEFAULT 0 NOT NULL,
	"labels" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "spans" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"session_pk" uuid NOT NULL,
	"trace_pk" uuid NOT NULL,
	"span_id" text NOT NULL,
	"parent_span_id" text,
	"trace_id" text NOT NULL,
	"session_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"start_time" timestamp with time zone NOT NULL,
	"end_time" timestamp with time zone NOT NULL,
	"attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"ingested_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "traces" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"session_pk" uuid NOT NULL,
	"trace_id" text NOT NULL,
	"session_id" text NOT NULL,
	"environment" text,
	"provider" text NOT NULL,
	"model" text,
	"start_time" timestamp with time zone NOT NULL,
	"end_time" timestamp with time zone NOT NULL,
	"payload" jsonb NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"ingested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"maturation_count" integer DEFAULT 0 NOT NULL,
	"matured_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "findings" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"session_pk" uuid NOT NULL,
	"session_id" text NOT NULL,
	"issue_id" uuid NOT NULL,
	"trace_id" text,
	"span_id" text,
	"detector" text NOT NULL,
	"fingerprint" text NOT NULL,
	"severity" text NOT NULL,
	"title" text NOT NULL,
	"evidence" jsonb NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "intent_definitions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"examples" text[] DEFAULT '{}' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "issues" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"fingerprint" text NOT NULL,
	"detector" text NOT NULL,
	"title" text NOT NULL,
	"severity" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"occurrences" integer DEFAULT 0 NOT NULL,
	"affected_sessions" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_analyses" (
	"session_pk" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"session_id" text NOT NULL,
	"maturation_count" integer NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	"through_ingested_at" timestamp with time zone NOT NULL,
	"through_activity_seq" bigint NOT NULL,
	"item_count" integer NOT NULL,
	"truncated" boolean DEFAULT false NOT NULL,
	"duration_ms" integer DEFAULT 0 NOT NULL,
	"turns" integer DEFAULT 0 NOT NULL,
	"model_calls" integer DEFAULT 0 NOT NULL,
	"tool_calls" integer DEFAULT 0 NOT NULL,
	"total_tokens" integer DEFAULT 0 NOT NULL,
	"errors" integer DEFAULT 0 NOT NULL,
	"problems" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision,
	"metrics" jsonb NOT NULL,
	"cost_by_model" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tool_costs" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tldr" text,
	"tldr_source" text
);
--> statement-breakpoint
CREATE TABLE "session_intents" (
	"session_pk" uuid NOT NULL,
	"intent_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"score" real NOT NULL,
	"evidence" jsonb NOT NULL,
	CONSTRAINT "session_intents_session_pk_intent_id_pk" PRIMARY KEY("session_pk","intent_id")
);
--> statement-breakpoint
CREATE TABLE "session_tool_schemas" (
	"session_pk" uuid NOT NULL,
	"tool_schema_id" uuid NOT NULL,
	CONSTRAINT "session_tool_schemas_session_pk_tool_schema_id_pk" PRIMARY KEY("session_pk","tool_schema_id")
);
--> statement-breakpoint
CREATE TABLE "tool_schemas" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"name" text NOT NULL,
	"schema_hash" text NOT NULL,
	"schema" jsonb NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trace_analyses" (
	"trace_pk" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"trace_id" text NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	"cost_usd" double precision,
	"metrics" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transcript_items" (
	"session_pk" uuid NOT NULL,
	"position" integer NOT NULL,
	"tenant_id" uuid NOT NULL,
	"item_id" text NOT NULL,
	"kind" text NOT NULL,
	"role" text,
	"timestamp" timestamp with time zone NOT NULL,
	"trace_id" text,
	"span_id" text,
	"item" jsonb NOT NULL,
	CONSTRAINT "transcript_items_session_pk_position_pk" PRIMARY KEY("session_pk","position")
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"delivery_id" text NOT NULL,
	"subscription_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"status_code" integer,
	"duration_ms" integer NOT NULL,
	"error" text,
	"attempted_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"subscription_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"event_key" text NOT NULL,
	"body" text NOT NULL,
	"enqueued_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_subscriptions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"trace_service_id" uuid NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"event_types" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"secret_encrypted" text NOT NULL,
	"previous_secret_encrypted" text,
	"previous_secret_expires_at" timestamp with time zone,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"last_delivery_status" text,
	"disabled_reason" text,
	"failing_since" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_memberships" ADD CONSTRAINT "project_memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_memberships" ADD CONSTRAINT "project_memberships_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trace_services" ADD CONSTRAINT "trace_services_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trace_services" ADD CONSTRAINT "trace_services_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_trace_pk_traces_id_fk" FOREIGN KEY ("trace_pk") REFERENCES "public"."traces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_issue_id_issues_id_fk" FOREIGN KEY ("issue_id") REFERENCES "public"."issues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "intent_definitions" ADD CONSTRAINT "intent_definitions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "intent_definitions" ADD CONSTRAINT "intent_definitions_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issues" ADD CONSTRAINT "issues_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issues" ADD CONSTRAINT "issues_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_intent_id_intent_definitions_id_fk" FOREIGN KEY ("intent_id") REFERENCES "public"."intent_definitions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ADD CONSTRAINT "session_tool_schemas_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ADD CONSTRAINT "session_tool_schemas_tool_schema_id_tool_schemas_id_fk" FOREIGN KEY ("tool_schema_id") REFERENCES "public"."tool_schemas"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_schemas" ADD CONSTRAINT "tool_schemas_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_schemas" ADD CONSTRAINT "tool_schemas_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_trace_pk_traces_id_fk" FOREIGN KEY ("trace_pk") REFERENCES "public"."traces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transcript_items" ADD CONSTRAINT "transcript_items_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transcript_items" ADD CONSTRAINT "transcript_items_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_subscription_id_webhook_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."webhook_subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."webhook_subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id") REFERENCES "public"."trace_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_uq" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "projects_tenant_name_uq" ON "projects" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "projects_one_default_uq" ON "projects" USING btree ("tenant_id") WHERE "projects"."is_default";--> statement-breakpoint
CREATE UNIQUE INDEX "trace_services_tenant_name_uq" ON "trace_services" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "users_tenant_email_uq" ON "users" USING btree ("tenant_id","email");--> statement-breakpoint
CREATE UNIQUE INDEX "events_service_key_uq" ON "events" USING btree ("trace_service_id","event_key");--> statement-breakpoint
CREATE INDEX "events_session_idx" ON "events" USING btree ("session_pk","timestamp");--> statement-breakpoint
CREATE INDEX "events_trace_idx" ON "events" USING btree ("trace_service_id","trace_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_service_session_uq" ON "sessions" USING btree ("trace_service_id","session_id");--> statement-breakpoint
CREATE INDEX "sessions_tenant_service_activity_idx" ON "sessions" USING btree ("tenant_id","trace_service_id","last_activity_at");--> statement-breakpoint
CREATE INDEX "sessions_active_ingested_idx" ON "sessions" USING btree ("status","last_ingested_at");--> statement-breakpoint
CREATE UNIQUE INDEX "spans_service_span_uq" ON "spans" USING btree ("trace_service_id","span_id");--> statement-breakpoint
CREATE INDEX "spans_trace_idx" ON "spans" USING btree ("trace_pk","start_time");--> statement-breakpoint
CREATE INDEX "spans_session_idx" ON "spans" USING btree ("session_pk","start_time");--> statement-breakpoint
CREATE UNIQUE INDEX "traces_service_trace_uq" ON "traces" USING btree ("trace_service_id","trace_id");--> statement-breakpoint
CREATE INDEX "traces_session_idx" ON "traces" USING btree ("session_pk","start_time");--> statement-breakpoint
CREATE INDEX "traces_active_ingested_idx" ON "traces" USING btree ("status","ingested_at");--> statement-breakpoint
CREATE INDEX "findings_session_idx" ON "findings" USING btree ("session_pk");--> statement-breakpoint
CREATE INDEX "findings_issue_idx" ON "findings" USING btree ("issue_id");--> statement-breakpoint
CREATE INDEX "findings_service_idx" ON "findings" USING btree ("tenant_id","trace_service_id","occurred_at");--> statement-breakpoint
CREATE UNIQUE INDEX "intent_definitions_service_name_uq" ON "intent_definitions" USING btree ("trace_service_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "issues_service_fingerprint_uq" ON "issues" USING btree ("trace_service_id","fingerprint");--> statement-breakpoint
CREATE INDEX "session_analyses_service_idx" ON "session_analyses" USING btree ("tenant_id","trace_service_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tool_schemas_service_hash_uq" ON "tool_schemas" USING btree ("trace_service_id","name","schema_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "transcript_items_item_uq" ON "transcript_items" USING btree ("session_pk","item_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_attempts_delivery_attempt_uq" ON "webhook_attempts" USING btree ("delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "webhook_attempts_sub_idx" ON "webhook_attempts" USING btree ("subscription_id","attempted_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_sub_event_uq" ON "webhook_deliveries" USING btree ("subscription_id","event_key");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_created_idx" ON "webhook_deliveries" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "webhook_subscriptions_service_idx" ON "webhook_subscriptions" USING btree ("trace_service_id");