-- Monitors (docs/monitors.md): one aggregate over matured sessions or traces of a service in a
-- sliding window, its state (ok / warning / alert) owned by shared/monitors/state-machine.ts.
CREATE TABLE "monitors" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL REFERENCES "tenants"("id") ON DELETE cascade,
	"trace_service_id" uuid NOT NULL REFERENCES "trace_services"("id") ON DELETE cascade,
	"name" text NOT NULL,
	"entity" text NOT NULL,
	"metric" text NOT NULL,
	"metric_arg" text,
	"filters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"window_seconds" integer NOT NULL,
	"direction" text NOT NULL,
	"threshold" double precision NOT NULL,
	"warning_threshold" double precision,
	"hysteresis" double precision DEFAULT 0 NOT NULL,
	"min_samples" integer DEFAULT 1 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"state" text DEFAULT 'ok' NOT NULL,
	"state_since" timestamp with time zone DEFAULT now() NOT NULL,
	"transitions" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "monitors_entity_check" CHECK ("entity" IN ('session', 'trace')),
	CONSTRAINT "monitors_direction_check" CHECK ("direction" IN ('above', 'below')),
	CONSTRAINT "monitors_state_check" CHECK ("state" IN ('ok', 'warning', 'alert'))
);
--> statement-breakpoint
CREATE INDEX "monitors_service_idx" ON "monitors" USING btree ("trace_service_id") WHERE "enabled";--> statement-breakpoint
CREATE INDEX "monitors_tenant_idx" ON "monitors" USING btree ("tenant_id");--> statement-breakpoint
-- One value per matured entity per monitor (the latest maturation's), the window's population.
CREATE TABLE "monitor_samples" (
	"monitor_id" uuid NOT NULL REFERENCES "monitors"("id") ON DELETE cascade,
	"entity_pk" uuid NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"value" double precision NOT NULL,
	CONSTRAINT "monitor_samples_pk" PRIMARY KEY ("monitor_id","entity_pk")
);
--> statement-breakpoint
CREATE INDEX "monitor_samples_window_idx" ON "monitor_samples" USING btree ("monitor_id","at");--> statement-breakpoint
-- Every state change (history) and, for the ones that notify, the outbox: written in the state
-- change's transaction, published to MATURED with message id monitor:<id>:<seq>, then marked.
CREATE TABLE "monitor_events" (
	"monitor_id" uuid NOT NULL REFERENCES "monitors"("id") ON DELETE cascade,
	"seq" integer NOT NULL,
	"tenant_id" uuid NOT NULL,
	"transition" text NOT NULL,
	"from_state" text NOT NULL,
	"to_state" text NOT NULL,
	"event_type" text,
	"value" double precision NOT NULL,
	"samples" integer NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"payload" jsonb,
	"published_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "monitor_events_pk" PRIMARY KEY ("monitor_id","seq")
);
--> statement-breakpoint
CREATE INDEX "monitor_events_unpublished_idx" ON "monitor_events" USING btree ("created_at") WHERE "event_type" IS NOT NULL AND "published_at" IS NULL;--> statement-breakpoint
-- The aggregate as evaluated, one point per monitor per minute (the last evaluation in it): the chart.
-- Per subscription: how monitor events are shaped (docs/monitors.md). `chat`: {"text": ...} for a
-- chat tool's incoming webhook; the contract's maturation events keep their body whatever this says.
ALTER TABLE "webhook_subscriptions" ADD COLUMN "payload_format" text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_payload_format_check" CHECK ("payload_format" IN ('standard', 'chat'));--> statement-breakpoint
CREATE TABLE "monitor_points" (
	"monitor_id" uuid NOT NULL REFERENCES "monitors"("id") ON DELETE cascade,
	"bucket" timestamp with time zone NOT NULL,
	"value" double precision,
	"samples" integer NOT NULL,
	"state" text NOT NULL,
	CONSTRAINT "monitor_points_pk" PRIMARY KEY ("monitor_id","bucket")
);
