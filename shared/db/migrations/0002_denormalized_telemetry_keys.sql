ALTER TABLE "events" DROP CONSTRAINT "events_tenant_id_tenants_id_fk";
--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_trace_service_id_trace_services_id_fk";
--> statement-breakpoint
ALTER TABLE "spans" DROP CONSTRAINT "spans_tenant_id_tenants_id_fk";
--> statement-breakpoint
ALTER TABLE "spans" DROP CONSTRAINT "spans_trace_service_id_trace_services_id_fk";
--> statement-breakpoint
ALTER TABLE "spans" DROP CONSTRAINT "spans_session_pk_sessions_id_fk";
--> statement-breakpoint
ALTER TABLE "traces" DROP CONSTRAINT "traces_tenant_id_tenants_id_fk";
--> statement-breakpoint
ALTER TABLE "traces" DROP CONSTRAINT "traces_trace_service_id_trace_services_id_fk";
