-- Every primary and unique key includes tenant_id (issue 28, "past one machine"; docs/scaling.md,
-- "Sharding by tenant"): a Postgres distributed by tenant (Citus) can only enforce a key that
-- holds the distribution column, and a foreign key between two distributed tables only when both
-- sides name it. tenant_id is appended last to each key, so every lookup that used the old key
-- still seeks the same index prefix (an id, a session_pk, a service + natural key); the foreign
-- keys that pointed at a re-keyed table are widened to (column, tenant_id) -> (id, tenant_id).
-- Six deployment-wide tables keep their keys: they become Citus reference tables (a copy on every
-- node), because they are read before any tenant is known: tenants, setup_tokens (first run),
-- users (sign-in finds the account by e-mail), api_keys (a request's key is found by its hash),
-- dashboard_sessions and invitations (found by their token's hash). test/tenant-keys.test.ts
-- checks all of it against the catalog.
-- Tables that had no tenant_id get one, filled from their parent: project_memberships (projects),
-- session_tool_schemas (sessions), webhook_attempts (webhook_deliveries), monitor_samples and
-- monitor_points (monitors), overview_session_parts (trace_services).
-- What it blocks (measured on a database seeded with bench/seed.ts, docs/scaling.md "Re-keying
-- an existing database"): it runs in the migration's one transaction and holds ACCESS EXCLUSIVE
-- on every table it re-keys until it commits, so platform reads and processor writes of these
-- tables wait for the whole migration; ingest keeps accepting (JetStream holds the messages and
-- the processor writes them afterwards). Each key is rebuilt once (an index build per key: a
-- sort of the table's key columns) and each widened foreign key is validated once (a scan of
-- the child joined to its parent). Measured (bench/migration-0019.ts on bench/seed.ts --traces
-- 200000, a loaded 2-core machine): 22 s, about 110 s per million traces at the seed's shape, two
-- thirds of it the spans and transcript_items keys; the floor (count(*) of every table) 1.4 s.
-- The reference tables (tenants, users, api_keys, ...) are not touched: key checks and sign-in go on.

-- 1. tenant_id where a table lacked it, from its parent.
ALTER TABLE "project_memberships" ADD COLUMN "tenant_id" uuid;--> statement-breakpoint
UPDATE "project_memberships" m SET "tenant_id" = p."tenant_id" FROM "projects" p WHERE p."id" = m."project_id";--> statement-breakpoint
ALTER TABLE "project_memberships" ALTER COLUMN "tenant_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ADD COLUMN "tenant_id" uuid;--> statement-breakpoint
UPDATE "session_tool_schemas" x SET "tenant_id" = s."tenant_id" FROM "sessions" s WHERE s."id" = x."session_pk";--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ALTER COLUMN "tenant_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD COLUMN "tenant_id" uuid;--> statement-breakpoint
UPDATE "webhook_attempts" a SET "tenant_id" = d."tenant_id" FROM "webhook_deliveries" d WHERE d."id" = a."delivery_id";--> statement-breakpoint
ALTER TABLE "webhook_attempts" ALTER COLUMN "tenant_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_samples" ADD COLUMN "tenant_id" uuid;--> statement-breakpoint
UPDATE "monitor_samples" x SET "tenant_id" = m."tenant_id" FROM "monitors" m WHERE m."id" = x."monitor_id";--> statement-breakpoint
ALTER TABLE "monitor_samples" ALTER COLUMN "tenant_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_points" ADD COLUMN "tenant_id" uuid;--> statement-breakpoint
UPDATE "monitor_points" x SET "tenant_id" = m."tenant_id" FROM "monitors" m WHERE m."id" = x."monitor_id";--> statement-breakpoint
ALTER TABLE "monitor_points" ALTER COLUMN "tenant_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "overview_session_parts" ADD COLUMN "tenant_id" uuid;--> statement-breakpoint
UPDATE "overview_session_parts" x SET "tenant_id" = ts."tenant_id" FROM "trace_services" ts WHERE ts."id" = x."trace_service_id";--> statement-breakpoint
ALTER TABLE "overview_session_parts" ALTER COLUMN "tenant_id" SET NOT NULL;--> statement-breakpoint

-- 2. The foreign keys into keys that change (re-added widened in step 4).
ALTER TABLE "trace_services" DROP CONSTRAINT "trace_services_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "project_memberships" DROP CONSTRAINT "project_memberships_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "sessions" DROP CONSTRAINT "sessions_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "findings" DROP CONSTRAINT "findings_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "intent_definitions" DROP CONSTRAINT "intent_definitions_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "issues" DROP CONSTRAINT "issues_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "session_analyses" DROP CONSTRAINT "session_analyses_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "tool_schemas" DROP CONSTRAINT "tool_schemas_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "trace_analyses" DROP CONSTRAINT "trace_analyses_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" DROP CONSTRAINT "webhook_subscriptions_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "detector_settings" DROP CONSTRAINT "detector_settings_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "overview_rollups" DROP CONSTRAINT "overview_rollups_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "overview_session_parts" DROP CONSTRAINT "overview_session_parts_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "scores" DROP CONSTRAINT "scores_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "score_configs" DROP CONSTRAINT "score_configs_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "monitors" DROP CONSTRAINT "monitors_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "traces" DROP CONSTRAINT "traces_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "findings" DROP CONSTRAINT "findings_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_analyses" DROP CONSTRAINT "session_analyses_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_intents" DROP CONSTRAINT "session_intents_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_tool_schemas" DROP CONSTRAINT "session_tool_schemas_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "transcript_items" DROP CONSTRAINT "transcript_items_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "spans" DROP CONSTRAINT "spans_trace_pk_traces_id_fk";--> statement-breakpoint
ALTER TABLE "trace_analyses" DROP CONSTRAINT "trace_analyses_trace_pk_traces_id_fk";--> statement-breakpoint
ALTER TABLE "trace_payloads" DROP CONSTRAINT "trace_payloads_trace_pk_fkey";--> statement-breakpoint
ALTER TABLE "findings" DROP CONSTRAINT "findings_issue_id_issues_id_fk";--> statement-breakpoint
ALTER TABLE "session_intents" DROP CONSTRAINT "session_intents_intent_id_intent_definitions_id_fk";--> statement-breakpoint
ALTER TABLE "session_tool_schemas" DROP CONSTRAINT "session_tool_schemas_tool_schema_id_tool_schemas_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_subscription_id_webhook_subscriptions_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk";--> statement-breakpoint
ALTER TABLE "monitor_samples" DROP CONSTRAINT "monitor_samples_monitor_id_fkey";--> statement-breakpoint
ALTER TABLE "monitor_events" DROP CONSTRAINT "monitor_events_monitor_id_fkey";--> statement-breakpoint
ALTER TABLE "monitor_points" DROP CONSTRAINT "monitor_points_monitor_id_fkey";--> statement-breakpoint

-- 3. The keys, tenant_id appended (same names).
ALTER TABLE "projects" DROP CONSTRAINT "projects_pkey", ADD CONSTRAINT "projects_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
ALTER TABLE "project_memberships" DROP CONSTRAINT "project_memberships_user_id_project_id_pk", ADD CONSTRAINT "project_memberships_pkey" PRIMARY KEY ("user_id", "project_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "trace_services" DROP CONSTRAINT "trace_services_pkey", ADD CONSTRAINT "trace_services_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
ALTER TABLE "sessions" DROP CONSTRAINT "sessions_pkey", ADD CONSTRAINT "sessions_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "sessions_service_session_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_service_session_uq" ON "sessions" USING btree ("trace_service_id", "session_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "traces" DROP CONSTRAINT "traces_pkey", ADD CONSTRAINT "traces_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "traces_service_trace_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "traces_service_trace_uq" ON "traces" USING btree ("trace_service_id", "trace_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "spans" DROP CONSTRAINT "spans_pkey", ADD CONSTRAINT "spans_pkey" PRIMARY KEY ("trace_service_id", "span_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_pkey", ADD CONSTRAINT "events_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "events_service_key_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "events_service_key_uq" ON "events" USING btree ("trace_service_id", "event_key", "tenant_id");--> statement-breakpoint
ALTER TABLE "transcript_items" DROP CONSTRAINT "transcript_items_session_pk_position_pk", ADD CONSTRAINT "transcript_items_pkey" PRIMARY KEY ("session_pk", "position", "tenant_id");--> statement-breakpoint
DROP INDEX "transcript_items_item_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "transcript_items_item_uq" ON "transcript_items" USING btree ("session_pk", "item_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "session_analyses" DROP CONSTRAINT "session_analyses_pkey", ADD CONSTRAINT "session_analyses_pkey" PRIMARY KEY ("session_pk", "tenant_id");--> statement-breakpoint
ALTER TABLE "trace_analyses" DROP CONSTRAINT "trace_analyses_pkey", ADD CONSTRAINT "trace_analyses_pkey" PRIMARY KEY ("trace_pk", "tenant_id");--> statement-breakpoint
ALTER TABLE "issues" DROP CONSTRAINT "issues_pkey", ADD CONSTRAINT "issues_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "issues_service_fingerprint_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "issues_service_fingerprint_uq" ON "issues" USING btree ("trace_service_id", "fingerprint", "tenant_id");--> statement-breakpoint
ALTER TABLE "findings" DROP CONSTRAINT "findings_pkey", ADD CONSTRAINT "findings_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
ALTER TABLE "tool_schemas" DROP CONSTRAINT "tool_schemas_pkey", ADD CONSTRAINT "tool_schemas_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "tool_schemas_service_hash_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "tool_schemas_service_hash_uq" ON "tool_schemas" USING btree ("trace_service_id", "name", "schema_hash", "tenant_id");--> statement-breakpoint
ALTER TABLE "session_tool_schemas" DROP CONSTRAINT "session_tool_schemas_session_pk_tool_schema_id_pk", ADD CONSTRAINT "session_tool_schemas_pkey" PRIMARY KEY ("session_pk", "tool_schema_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "intent_definitions" DROP CONSTRAINT "intent_definitions_pkey", ADD CONSTRAINT "intent_definitions_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "intent_definitions_service_name_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "intent_definitions_service_name_uq" ON "intent_definitions" USING btree ("trace_service_id", "name", "tenant_id");--> statement-breakpoint
ALTER TABLE "session_intents" DROP CONSTRAINT "session_intents_session_pk_intent_id_pk", ADD CONSTRAINT "session_intents_pkey" PRIMARY KEY ("session_pk", "intent_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "detector_settings" DROP CONSTRAINT "detector_settings_pkey", ADD CONSTRAINT "detector_settings_pkey" PRIMARY KEY ("trace_service_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" DROP CONSTRAINT "webhook_subscriptions_pkey", ADD CONSTRAINT "webhook_subscriptions_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_pkey", ADD CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "webhook_deliveries_sub_event_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_sub_event_uq" ON "webhook_deliveries" USING btree ("subscription_id", "event_key", "tenant_id");--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_pkey", ADD CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "webhook_attempts_delivery_attempt_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_attempts_delivery_attempt_uq" ON "webhook_attempts" USING btree ("delivery_id", "attempt", "tenant_id");--> statement-breakpoint
ALTER TABLE "overview_rollups" DROP CONSTRAINT "overview_rollups_pkey", ADD CONSTRAINT "overview_rollups_pkey" PRIMARY KEY ("trace_service_id", "bucket_seconds", "bucket_start", "environment", "model", "tenant_id");--> statement-breakpoint
ALTER TABLE "overview_session_parts" DROP CONSTRAINT "overview_session_parts_pkey", ADD CONSTRAINT "overview_session_parts_pkey" PRIMARY KEY ("session_pk", "tenant_id");--> statement-breakpoint
ALTER TABLE "scores" DROP CONSTRAINT "scores_pkey", ADD CONSTRAINT "scores_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "scores_service_idempotency_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "scores_service_idempotency_uq" ON "scores" USING btree ("trace_service_id", "idempotency_key", "tenant_id");--> statement-breakpoint
ALTER TABLE "score_configs" DROP CONSTRAINT "score_configs_pk", ADD CONSTRAINT "score_configs_pk" PRIMARY KEY ("trace_service_id", "name", "tenant_id");--> statement-breakpoint
ALTER TABLE "monitors" DROP CONSTRAINT "monitors_pkey", ADD CONSTRAINT "monitors_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
ALTER TABLE "monitor_samples" DROP CONSTRAINT "monitor_samples_pk", ADD CONSTRAINT "monitor_samples_pk" PRIMARY KEY ("monitor_id", "entity_pk", "tenant_id");--> statement-breakpoint
ALTER TABLE "monitor_events" DROP CONSTRAINT "monitor_events_pk", ADD CONSTRAINT "monitor_events_pk" PRIMARY KEY ("monitor_id", "seq", "tenant_id");--> statement-breakpoint
ALTER TABLE "monitor_points" DROP CONSTRAINT "monitor_points_pk", ADD CONSTRAINT "monitor_points_pk" PRIMARY KEY ("monitor_id", "bucket", "tenant_id");--> statement-breakpoint

-- 4. The foreign keys again, widened to (column, tenant_id); same names, same cascades.
ALTER TABLE "trace_services" ADD CONSTRAINT "trace_services_project_id_projects_id_fk" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "project_memberships" ADD CONSTRAINT "project_memberships_project_id_projects_id_fk" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "intent_definitions" ADD CONSTRAINT "intent_definitions_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "issues" ADD CONSTRAINT "issues_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "tool_schemas" ADD CONSTRAINT "tool_schemas_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_trace_service_id_trace_services_id_fk" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "detector_settings" ADD CONSTRAINT "detector_settings_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "overview_rollups" ADD CONSTRAINT "overview_rollups_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "overview_session_parts" ADD CONSTRAINT "overview_session_parts_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "scores" ADD CONSTRAINT "scores_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "score_configs" ADD CONSTRAINT "score_configs_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitors" ADD CONSTRAINT "monitors_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ADD CONSTRAINT "session_tool_schemas_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "transcript_items" ADD CONSTRAINT "transcript_items_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_trace_pk_traces_id_fk" FOREIGN KEY ("trace_pk", "tenant_id") REFERENCES "traces" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_trace_pk_traces_id_fk" FOREIGN KEY ("trace_pk", "tenant_id") REFERENCES "traces" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "trace_payloads" ADD CONSTRAINT "trace_payloads_trace_pk_fkey" FOREIGN KEY ("trace_pk", "tenant_id") REFERENCES "traces" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_issue_id_issues_id_fk" FOREIGN KEY ("issue_id", "tenant_id") REFERENCES "issues" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_intent_id_intent_definitions_id_fk" FOREIGN KEY ("intent_id", "tenant_id") REFERENCES "intent_definitions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ADD CONSTRAINT "session_tool_schemas_tool_schema_id_tool_schemas_id_fk" FOREIGN KEY ("tool_schema_id", "tenant_id") REFERENCES "tool_schemas" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk" FOREIGN KEY ("subscription_id", "tenant_id") REFERENCES "webhook_subscriptions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_subscription_id_webhook_subscriptions_id_fk" FOREIGN KEY ("subscription_id", "tenant_id") REFERENCES "webhook_subscriptions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id", "tenant_id") REFERENCES "webhook_deliveries" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitor_samples" ADD CONSTRAINT "monitor_samples_monitor_id_fkey" FOREIGN KEY ("monitor_id", "tenant_id") REFERENCES "monitors" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitor_events" ADD CONSTRAINT "monitor_events_monitor_id_fkey" FOREIGN KEY ("monitor_id", "tenant_id") REFERENCES "monitors" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitor_points" ADD CONSTRAINT "monitor_points_monitor_id_fkey" FOREIGN KEY ("monitor_id", "tenant_id") REFERENCES "monitors" ("id", "tenant_id") ON DELETE CASCADE;
