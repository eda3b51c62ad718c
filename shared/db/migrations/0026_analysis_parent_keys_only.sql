-- Issue 28: rows written at every maturation keep only their parent's key, as traces, spans and
-- events have since migration 0002. Their tenant and service are copies of the parent's: the
-- composite keys (trace_pk, tenant_id) -> traces and (session_pk, tenant_id) -> sessions keep
-- them the parent's tenant, and deletes still cascade from a tenant or a service through
-- sessions and traces. Each of these keys was a locking lookup (FOR KEY SHARE) of the tenant's or
-- the service's row per inserted row: 3 lookups for each trace analysis, about half the
-- maturation statement's time (EXPLAIN ANALYZE, docs/performance.md "Maturation throughput").
-- Catalog only.
ALTER TABLE "trace_analyses" DROP CONSTRAINT IF EXISTS "trace_analyses_tenant_id_tenants_id_fk";--> statement-breakpoint
ALTER TABLE "trace_analyses" DROP CONSTRAINT IF EXISTS "trace_analyses_trace_service_id_trace_services_id_fk";--> statement-breakpoint
ALTER TABLE "transcript_items" DROP CONSTRAINT IF EXISTS "transcript_items_tenant_id_tenants_id_fk";--> statement-breakpoint
ALTER TABLE "session_analyses" DROP CONSTRAINT IF EXISTS "session_analyses_tenant_id_tenants_id_fk";--> statement-breakpoint
ALTER TABLE "session_analyses" DROP CONSTRAINT IF EXISTS "session_analyses_trace_service_id_trace_services_id_fk";
