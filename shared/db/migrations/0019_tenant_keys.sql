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
-- What it blocks (bench/migration-0019.ts, docs/scaling.md "Re-keying an existing database"):
-- one transaction in four steps so the long work runs while reads go on. Steps 1-2 build each
-- new key's index beside the old one (SHARE) and validate each widened foreign key against it
-- (SHARE ROW EXCLUSIVE): writes to these tables wait, reads do not. Steps 3-4 only change the
-- catalog (and re-key six small tables): ACCESS EXCLUSIVE on every re-keyed table from there
-- to the commit, a fraction of a second. Measured on bench/seed.ts --traces 200000 (a loaded
-- 2-core machine, two runs): 17-36 s in all, about 86-180 s per million traces at the seed's
-- shape; the longest wait of a read of spans 0.4-1.8 s, of a write of sessions the whole run. Ingest keeps accepting
-- (JetStream holds the messages; processors write them after the commit). The reference tables
-- are not touched: key checks and sign-in go on.
-- Stop the previous version's processors and dispatchers before it runs: their ON CONFLICT
-- targets name the old keys (and their inserts into the six tables lack tenant_id), so their
-- writes would fail once it commits and their messages go to retries and dead letters.

-- 1. The new keys' indexes, built beside the old ones (SHARE: reads go on, writes wait).
CREATE UNIQUE INDEX "projects_pkey_0019" ON "projects" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "trace_services_pkey_0019" ON "trace_services" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_pkey_0019" ON "sessions" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_service_session_uq_0019" ON "sessions" USING btree ("trace_service_id", "session_id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "traces_pkey_0019" ON "traces" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "traces_service_trace_uq_0019" ON "traces" USING btree ("trace_service_id", "trace_id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "spans_pkey_0019" ON "spans" USING btree ("trace_service_id", "span_id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "events_pkey_0019" ON "events" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "events_service_key_uq_0019" ON "events" USING btree ("trace_service_id", "event_key", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "transcript_items_pkey_0019" ON "transcript_items" USING btree ("session_pk", "position", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "transcript_items_item_uq_0019" ON "transcript_items" USING btree ("session_pk", "item_id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "session_analyses_pkey_0019" ON "session_analyses" USING btree ("session_pk", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "trace_analyses_pkey_0019" ON "trace_analyses" USING btree ("trace_pk", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "issues_pkey_0019" ON "issues" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "issues_service_fingerprint_uq_0019" ON "issues" USING btree ("trace_service_id", "fingerprint", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "findings_pkey_0019" ON "findings" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tool_schemas_pkey_0019" ON "tool_schemas" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tool_schemas_service_hash_uq_0019" ON "tool_schemas" USING btree ("trace_service_id", "name", "schema_hash", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "intent_definitions_pkey_0019" ON "intent_definitions" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "intent_definitions_service_name_uq_0019" ON "intent_definitions" USING btree ("trace_service_id", "name", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "session_intents_pkey_0019" ON "session_intents" USING btree ("session_pk", "intent_id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "detector_settings_pkey_0019" ON "detector_settings" USING btree ("trace_service_id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_subscriptions_pkey_0019" ON "webhook_subscriptions" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_pkey_0019" ON "webhook_deliveries" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_sub_event_uq_0019" ON "webhook_deliveries" USING btree ("subscription_id", "event_key", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "overview_rollups_pkey_0019" ON "overview_rollups" USING btree ("trace_service_id", "bucket_seconds", "bucket_start", "environment", "model", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scores_pkey_0019" ON "scores" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scores_service_idempotency_uq_0019" ON "scores" USING btree ("trace_service_id", "idempotency_key", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "score_configs_pk_0019" ON "score_configs" USING btree ("trace_service_id", "name", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "monitors_pkey_0019" ON "monitors" USING btree ("id", "tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "monitor_events_pk_0019" ON "monitor_events" USING btree ("monitor_id", "seq", "tenant_id");--> statement-breakpoint

-- 2. The widened foreign keys, validated against those indexes (SHARE ROW EXCLUSIVE: reads go on),
-- under a temporary name while the old ones still stand.
ALTER TABLE "trace_services" ADD CONSTRAINT "trace_services_project_id_projects_id_fk_0019" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "intent_definitions" ADD CONSTRAINT "intent_definitions_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "issues" ADD CONSTRAINT "issues_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "tool_schemas" ADD CONSTRAINT "tool_schemas_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_trace_service_id_trace_services_id_fk_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "detector_settings" ADD CONSTRAINT "detector_settings_trace_service_id_fkey_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "overview_rollups" ADD CONSTRAINT "overview_rollups_trace_service_id_fkey_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "scores" ADD CONSTRAINT "scores_trace_service_id_fkey_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "score_configs" ADD CONSTRAINT "score_configs_trace_service_id_fkey_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitors" ADD CONSTRAINT "monitors_trace_service_id_fkey_0019" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_session_pk_sessions_id_fk_0019" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_session_pk_sessions_id_fk_0019" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_session_pk_sessions_id_fk_0019" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_session_pk_sessions_id_fk_0019" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_session_pk_sessions_id_fk_0019" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "transcript_items" ADD CONSTRAINT "transcript_items_session_pk_sessions_id_fk_0019" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_trace_pk_traces_id_fk_0019" FOREIGN KEY ("trace_pk", "tenant_id") REFERENCES "traces" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_trace_pk_traces_id_fk_0019" FOREIGN KEY ("trace_pk", "tenant_id") REFERENCES "traces" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "trace_payloads" ADD CONSTRAINT "trace_payloads_trace_pk_fkey_0019" FOREIGN KEY ("trace_pk", "tenant_id") REFERENCES "traces" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_issue_id_issues_id_fk_0019" FOREIGN KEY ("issue_id", "tenant_id") REFERENCES "issues" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_intent_id_intent_definitions_id_fk_0019" FOREIGN KEY ("intent_id", "tenant_id") REFERENCES "intent_definitions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk_0019" FOREIGN KEY ("subscription_id", "tenant_id") REFERENCES "webhook_subscriptions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitor_events" ADD CONSTRAINT "monitor_events_monitor_id_fkey_0019" FOREIGN KEY ("monitor_id", "tenant_id") REFERENCES "monitors" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint

-- The foreign keys into re-keyed tables that do not name tenant_id, for the two walks below.
CREATE TEMPORARY VIEW fk0019_narrow AS SELECT con.conname, con.conrelid, con.confrelid, con.conkey, con.conrelid::regclass AS child, con.confrelid::regclass AS parent,
      (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.i) FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n) AS cols,
      (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.i) FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n) AS refcols,
      CASE con.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END AS on_delete,
      EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = con.conrelid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS child_has_tenant
    FROM pg_constraint con
    WHERE con.contype = 'f' AND con.connamespace = 'public'::regnamespace
      AND con.confrelid::regclass::text IN ('projects', 'trace_services', 'sessions', 'traces', 'spans', 'events', 'transcript_items', 'session_analyses', 'trace_analyses', 'issues', 'findings', 'tool_schemas', 'intent_definitions', 'detector_settings', 'webhook_subscriptions', 'webhook_deliveries', 'overview_rollups', 'scores', 'score_configs', 'monitors', 'monitor_events')
      AND NOT EXISTS (SELECT 1 FROM unnest(con.confkey) k(n) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n WHERE a.attname = 'tenant_id');--> statement-breakpoint

-- Foreign keys into these tables that this file does not name (tables added by other migrations
-- of the same round, e.g. a per-span table pointing at traces): widened the same way, keeping
-- their names and delete rules; a child without tenant_id stops the migration, naming it.
DO $$
DECLARE fk record;
BEGIN
  -- Not those this file widened above (a key from the same columns plus tenant_id to the same
  -- table), nor the six tables that get tenant_id in step 4 (re-keyed there).
  FOR fk IN SELECT * FROM fk0019_narrow v
    WHERE NOT EXISTS (SELECT 1 FROM pg_constraint o WHERE o.conrelid = v.conrelid AND o.confrelid = v.confrelid
        AND o.contype = 'f' AND o.conkey = v.conkey || (SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = v.conrelid AND a.attname = 'tenant_id'))
      AND v.conrelid::regclass::text NOT IN ('project_memberships', 'session_tool_schemas', 'webhook_attempts',
        'monitor_samples', 'monitor_points', 'overview_session_parts')
  LOOP
    IF NOT fk.child_has_tenant THEN
      RAISE EXCEPTION 'table % has foreign key % into % but no tenant_id column: give it one before migration 0019', fk.child, fk.conname, fk.parent;
    END IF;
    -- A temporary name that fits in 63 bytes; the old one is kept in its comment until step 3.
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%s, tenant_id) REFERENCES %s (%s, tenant_id) ON DELETE %s',
      fk.child, 'fk0019_' || md5(fk.child::text || fk.conname), fk.cols, fk.parent, fk.refcols, fk.on_delete);
    EXECUTE format('COMMENT ON CONSTRAINT %I ON %s IS %L', 'fk0019_' || md5(fk.child::text || fk.conname), fk.child, fk.conname);
  END LOOP;
END $$;--> statement-breakpoint

-- 3. The swap, catalog changes only: the old foreign keys and keys go, the new ones take their
-- names (ACCESS EXCLUSIVE from here to the commit: reads wait from here on).
ALTER TABLE "project_memberships" DROP CONSTRAINT "project_memberships_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "overview_session_parts" DROP CONSTRAINT "overview_session_parts_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "session_tool_schemas" DROP CONSTRAINT "session_tool_schemas_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_tool_schemas" DROP CONSTRAINT "session_tool_schemas_tool_schema_id_tool_schemas_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_subscription_id_webhook_subscriptions_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk";--> statement-breakpoint
ALTER TABLE "monitor_samples" DROP CONSTRAINT "monitor_samples_monitor_id_fkey";--> statement-breakpoint
ALTER TABLE "monitor_points" DROP CONSTRAINT "monitor_points_monitor_id_fkey";--> statement-breakpoint
ALTER TABLE "trace_services" DROP CONSTRAINT "trace_services_project_id_projects_id_fk";--> statement-breakpoint
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
ALTER TABLE "scores" DROP CONSTRAINT "scores_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "score_configs" DROP CONSTRAINT "score_configs_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "monitors" DROP CONSTRAINT "monitors_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "traces" DROP CONSTRAINT "traces_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "findings" DROP CONSTRAINT "findings_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_analyses" DROP CONSTRAINT "session_analyses_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_intents" DROP CONSTRAINT "session_intents_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "transcript_items" DROP CONSTRAINT "transcript_items_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "spans" DROP CONSTRAINT "spans_trace_pk_traces_id_fk";--> statement-breakpoint
ALTER TABLE "trace_analyses" DROP CONSTRAINT "trace_analyses_trace_pk_traces_id_fk";--> statement-breakpoint
ALTER TABLE "trace_payloads" DROP CONSTRAINT "trace_payloads_trace_pk_fkey";--> statement-breakpoint
ALTER TABLE "findings" DROP CONSTRAINT "findings_issue_id_issues_id_fk";--> statement-breakpoint
ALTER TABLE "session_intents" DROP CONSTRAINT "session_intents_intent_id_intent_definitions_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk";--> statement-breakpoint
ALTER TABLE "monitor_events" DROP CONSTRAINT "monitor_events_monitor_id_fkey";--> statement-breakpoint
-- Those other foreign keys' old versions go too (their widened ones were added in step 2).
DO $$
DECLARE fk record;
BEGIN
  FOR fk IN SELECT * FROM fk0019_narrow
  LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.child, fk.conname);
  END LOOP;
END $$;--> statement-breakpoint
ALTER TABLE "projects" DROP CONSTRAINT "projects_pkey";--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_pkey" PRIMARY KEY USING INDEX "projects_pkey_0019";--> statement-breakpoint
ALTER TABLE "trace_services" DROP CONSTRAINT "trace_services_pkey";--> statement-breakpoint
ALTER TABLE "trace_services" ADD CONSTRAINT "trace_services_pkey" PRIMARY KEY USING INDEX "trace_services_pkey_0019";--> statement-breakpoint
ALTER TABLE "sessions" DROP CONSTRAINT "sessions_pkey";--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_pkey" PRIMARY KEY USING INDEX "sessions_pkey_0019";--> statement-breakpoint
DROP INDEX "sessions_service_session_uq";--> statement-breakpoint
ALTER INDEX "sessions_service_session_uq_0019" RENAME TO "sessions_service_session_uq";--> statement-breakpoint
ALTER TABLE "traces" DROP CONSTRAINT "traces_pkey";--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_pkey" PRIMARY KEY USING INDEX "traces_pkey_0019";--> statement-breakpoint
DROP INDEX "traces_service_trace_uq";--> statement-breakpoint
ALTER INDEX "traces_service_trace_uq_0019" RENAME TO "traces_service_trace_uq";--> statement-breakpoint
ALTER TABLE "spans" DROP CONSTRAINT "spans_pkey";--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_pkey" PRIMARY KEY USING INDEX "spans_pkey_0019";--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_pkey";--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_pkey" PRIMARY KEY USING INDEX "events_pkey_0019";--> statement-breakpoint
DROP INDEX "events_service_key_uq";--> statement-breakpoint
ALTER INDEX "events_service_key_uq_0019" RENAME TO "events_service_key_uq";--> statement-breakpoint
ALTER TABLE "transcript_items" DROP CONSTRAINT "transcript_items_session_pk_position_pk";--> statement-breakpoint
ALTER TABLE "transcript_items" ADD CONSTRAINT "transcript_items_pkey" PRIMARY KEY USING INDEX "transcript_items_pkey_0019";--> statement-breakpoint
DROP INDEX "transcript_items_item_uq";--> statement-breakpoint
ALTER INDEX "transcript_items_item_uq_0019" RENAME TO "transcript_items_item_uq";--> statement-breakpoint
ALTER TABLE "session_analyses" DROP CONSTRAINT "session_analyses_pkey";--> statement-breakpoint
ALTER TABLE "session_analyses" ADD CONSTRAINT "session_analyses_pkey" PRIMARY KEY USING INDEX "session_analyses_pkey_0019";--> statement-breakpoint
ALTER TABLE "trace_analyses" DROP CONSTRAINT "trace_analyses_pkey";--> statement-breakpoint
ALTER TABLE "trace_analyses" ADD CONSTRAINT "trace_analyses_pkey" PRIMARY KEY USING INDEX "trace_analyses_pkey_0019";--> statement-breakpoint
ALTER TABLE "issues" DROP CONSTRAINT "issues_pkey";--> statement-breakpoint
ALTER TABLE "issues" ADD CONSTRAINT "issues_pkey" PRIMARY KEY USING INDEX "issues_pkey_0019";--> statement-breakpoint
DROP INDEX "issues_service_fingerprint_uq";--> statement-breakpoint
ALTER INDEX "issues_service_fingerprint_uq_0019" RENAME TO "issues_service_fingerprint_uq";--> statement-breakpoint
ALTER TABLE "findings" DROP CONSTRAINT "findings_pkey";--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_pkey" PRIMARY KEY USING INDEX "findings_pkey_0019";--> statement-breakpoint
ALTER TABLE "tool_schemas" DROP CONSTRAINT "tool_schemas_pkey";--> statement-breakpoint
ALTER TABLE "tool_schemas" ADD CONSTRAINT "tool_schemas_pkey" PRIMARY KEY USING INDEX "tool_schemas_pkey_0019";--> statement-breakpoint
DROP INDEX "tool_schemas_service_hash_uq";--> statement-breakpoint
ALTER INDEX "tool_schemas_service_hash_uq_0019" RENAME TO "tool_schemas_service_hash_uq";--> statement-breakpoint
ALTER TABLE "intent_definitions" DROP CONSTRAINT "intent_definitions_pkey";--> statement-breakpoint
ALTER TABLE "intent_definitions" ADD CONSTRAINT "intent_definitions_pkey" PRIMARY KEY USING INDEX "intent_definitions_pkey_0019";--> statement-breakpoint
DROP INDEX "intent_definitions_service_name_uq";--> statement-breakpoint
ALTER INDEX "intent_definitions_service_name_uq_0019" RENAME TO "intent_definitions_service_name_uq";--> statement-breakpoint
ALTER TABLE "session_intents" DROP CONSTRAINT "session_intents_session_pk_intent_id_pk";--> statement-breakpoint
ALTER TABLE "session_intents" ADD CONSTRAINT "session_intents_pkey" PRIMARY KEY USING INDEX "session_intents_pkey_0019";--> statement-breakpoint
ALTER TABLE "detector_settings" DROP CONSTRAINT "detector_settings_pkey";--> statement-breakpoint
ALTER TABLE "detector_settings" ADD CONSTRAINT "detector_settings_pkey" PRIMARY KEY USING INDEX "detector_settings_pkey_0019";--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" DROP CONSTRAINT "webhook_subscriptions_pkey";--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_pkey" PRIMARY KEY USING INDEX "webhook_subscriptions_pkey_0019";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_pkey";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY USING INDEX "webhook_deliveries_pkey_0019";--> statement-breakpoint
DROP INDEX "webhook_deliveries_sub_event_uq";--> statement-breakpoint
ALTER INDEX "webhook_deliveries_sub_event_uq_0019" RENAME TO "webhook_deliveries_sub_event_uq";--> statement-breakpoint
ALTER TABLE "overview_rollups" DROP CONSTRAINT "overview_rollups_pkey";--> statement-breakpoint
ALTER TABLE "overview_rollups" ADD CONSTRAINT "overview_rollups_pkey" PRIMARY KEY USING INDEX "overview_rollups_pkey_0019";--> statement-breakpoint
ALTER TABLE "scores" DROP CONSTRAINT "scores_pkey";--> statement-breakpoint
ALTER TABLE "scores" ADD CONSTRAINT "scores_pkey" PRIMARY KEY USING INDEX "scores_pkey_0019";--> statement-breakpoint
DROP INDEX "scores_service_idempotency_uq";--> statement-breakpoint
ALTER INDEX "scores_service_idempotency_uq_0019" RENAME TO "scores_service_idempotency_uq";--> statement-breakpoint
ALTER TABLE "score_configs" DROP CONSTRAINT "score_configs_pk";--> statement-breakpoint
ALTER TABLE "score_configs" ADD CONSTRAINT "score_configs_pk" PRIMARY KEY USING INDEX "score_configs_pk_0019";--> statement-breakpoint
ALTER TABLE "monitors" DROP CONSTRAINT "monitors_pkey";--> statement-breakpoint
ALTER TABLE "monitors" ADD CONSTRAINT "monitors_pkey" PRIMARY KEY USING INDEX "monitors_pkey_0019";--> statement-breakpoint
ALTER TABLE "monitor_events" DROP CONSTRAINT "monitor_events_pk";--> statement-breakpoint
ALTER TABLE "monitor_events" ADD CONSTRAINT "monitor_events_pk" PRIMARY KEY USING INDEX "monitor_events_pk_0019";--> statement-breakpoint
ALTER TABLE "trace_services" RENAME CONSTRAINT "trace_services_project_id_projects_id_fk_0019" TO "trace_services_project_id_projects_id_fk";--> statement-breakpoint
ALTER TABLE "sessions" RENAME CONSTRAINT "sessions_trace_service_id_trace_services_id_fk_0019" TO "sessions_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "findings" RENAME CONSTRAINT "findings_trace_service_id_trace_services_id_fk_0019" TO "findings_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "intent_definitions" RENAME CONSTRAINT "intent_definitions_trace_service_id_trace_services_id_fk_0019" TO "intent_definitions_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "issues" RENAME CONSTRAINT "issues_trace_service_id_trace_services_id_fk_0019" TO "issues_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "session_analyses" RENAME CONSTRAINT "session_analyses_trace_service_id_trace_services_id_fk_0019" TO "session_analyses_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "tool_schemas" RENAME CONSTRAINT "tool_schemas_trace_service_id_trace_services_id_fk_0019" TO "tool_schemas_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "trace_analyses" RENAME CONSTRAINT "trace_analyses_trace_service_id_trace_services_id_fk_0019" TO "trace_analyses_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" RENAME CONSTRAINT "webhook_subscriptions_trace_service_id_trace_services_id_fk_0019" TO "webhook_subscriptions_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "detector_settings" RENAME CONSTRAINT "detector_settings_trace_service_id_fkey_0019" TO "detector_settings_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "overview_rollups" RENAME CONSTRAINT "overview_rollups_trace_service_id_fkey_0019" TO "overview_rollups_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "scores" RENAME CONSTRAINT "scores_trace_service_id_fkey_0019" TO "scores_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "score_configs" RENAME CONSTRAINT "score_configs_trace_service_id_fkey_0019" TO "score_configs_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "monitors" RENAME CONSTRAINT "monitors_trace_service_id_fkey_0019" TO "monitors_trace_service_id_fkey";--> statement-breakpoint
ALTER TABLE "events" RENAME CONSTRAINT "events_session_pk_sessions_id_fk_0019" TO "events_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "traces" RENAME CONSTRAINT "traces_session_pk_sessions_id_fk_0019" TO "traces_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "findings" RENAME CONSTRAINT "findings_session_pk_sessions_id_fk_0019" TO "findings_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_analyses" RENAME CONSTRAINT "session_analyses_session_pk_sessions_id_fk_0019" TO "session_analyses_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "session_intents" RENAME CONSTRAINT "session_intents_session_pk_sessions_id_fk_0019" TO "session_intents_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "transcript_items" RENAME CONSTRAINT "transcript_items_session_pk_sessions_id_fk_0019" TO "transcript_items_session_pk_sessions_id_fk";--> statement-breakpoint
ALTER TABLE "spans" RENAME CONSTRAINT "spans_trace_pk_traces_id_fk_0019" TO "spans_trace_pk_traces_id_fk";--> statement-breakpoint
ALTER TABLE "trace_analyses" RENAME CONSTRAINT "trace_analyses_trace_pk_traces_id_fk_0019" TO "trace_analyses_trace_pk_traces_id_fk";--> statement-breakpoint
ALTER TABLE "trace_payloads" RENAME CONSTRAINT "trace_payloads_trace_pk_fkey_0019" TO "trace_payloads_trace_pk_fkey";--> statement-breakpoint
ALTER TABLE "findings" RENAME CONSTRAINT "findings_issue_id_issues_id_fk_0019" TO "findings_issue_id_issues_id_fk";--> statement-breakpoint
ALTER TABLE "session_intents" RENAME CONSTRAINT "session_intents_intent_id_intent_definitions_id_fk_0019" TO "session_intents_intent_id_intent_definitions_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" RENAME CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk_0019" TO "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk";--> statement-breakpoint
ALTER TABLE "monitor_events" RENAME CONSTRAINT "monitor_events_monitor_id_fkey_0019" TO "monitor_events_monitor_id_fkey";--> statement-breakpoint
-- And their widened ones take the old names.
DO $$
DECLARE fk record;
BEGIN
  FOR fk IN SELECT con.conrelid::regclass AS child, con.conname, obj_description(con.oid, 'pg_constraint') AS old_name
    FROM pg_constraint con
    WHERE con.contype = 'f' AND con.connamespace = 'public'::regnamespace AND con.conname LIKE 'fk0019\_%'
  LOOP
    EXECUTE format('COMMENT ON CONSTRAINT %I ON %s IS NULL', fk.conname, fk.child);
    EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', fk.child, fk.conname, fk.old_name);
  END LOOP;
END $$;--> statement-breakpoint
DROP VIEW fk0019_narrow;--> statement-breakpoint

-- 4. The six small tables without tenant_id: the column, filled from the parent, then their
-- keys and foreign keys the same way.
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
ALTER TABLE "project_memberships" DROP CONSTRAINT "project_memberships_user_id_project_id_pk", ADD CONSTRAINT "project_memberships_pkey" PRIMARY KEY ("user_id", "project_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "session_tool_schemas" DROP CONSTRAINT "session_tool_schemas_session_pk_tool_schema_id_pk", ADD CONSTRAINT "session_tool_schemas_pkey" PRIMARY KEY ("session_pk", "tool_schema_id", "tenant_id");--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_pkey", ADD CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id", "tenant_id");--> statement-breakpoint
DROP INDEX "webhook_attempts_delivery_attempt_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_attempts_delivery_attempt_uq" ON "webhook_attempts" USING btree ("delivery_id", "attempt", "tenant_id");--> statement-breakpoint
ALTER TABLE "overview_session_parts" DROP CONSTRAINT "overview_session_parts_pkey", ADD CONSTRAINT "overview_session_parts_pkey" PRIMARY KEY ("session_pk", "tenant_id");--> statement-breakpoint
ALTER TABLE "monitor_samples" DROP CONSTRAINT "monitor_samples_pk", ADD CONSTRAINT "monitor_samples_pk" PRIMARY KEY ("monitor_id", "entity_pk", "tenant_id");--> statement-breakpoint
ALTER TABLE "monitor_points" DROP CONSTRAINT "monitor_points_pk", ADD CONSTRAINT "monitor_points_pk" PRIMARY KEY ("monitor_id", "bucket", "tenant_id");--> statement-breakpoint
ALTER TABLE "project_memberships" ADD CONSTRAINT "project_memberships_project_id_projects_id_fk" FOREIGN KEY ("project_id", "tenant_id") REFERENCES "projects" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "overview_session_parts" ADD CONSTRAINT "overview_session_parts_trace_service_id_fkey" FOREIGN KEY ("trace_service_id", "tenant_id") REFERENCES "trace_services" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ADD CONSTRAINT "session_tool_schemas_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "session_tool_schemas" ADD CONSTRAINT "session_tool_schemas_tool_schema_id_tool_schemas_id_fk" FOREIGN KEY ("tool_schema_id", "tenant_id") REFERENCES "tool_schemas" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_subscription_id_webhook_subscriptions_id_fk" FOREIGN KEY ("subscription_id", "tenant_id") REFERENCES "webhook_subscriptions" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id", "tenant_id") REFERENCES "webhook_deliveries" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitor_samples" ADD CONSTRAINT "monitor_samples_monitor_id_fkey" FOREIGN KEY ("monitor_id", "tenant_id") REFERENCES "monitors" ("id", "tenant_id") ON DELETE CASCADE;--> statement-breakpoint
ALTER TABLE "monitor_points" ADD CONSTRAINT "monitor_points_monitor_id_fkey" FOREIGN KEY ("monitor_id", "tenant_id") REFERENCES "monitors" ("id", "tenant_id") ON DELETE CASCADE;
