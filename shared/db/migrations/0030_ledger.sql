-- Issue 41, part 1: the ledger (docs/ledger.md). Counts only, per tenant, service, minute and
-- stage: what the SDKs were asked to send and dropped, what ingest accepted (per door) and refused
-- (per reason), what the processor stored and dead-lettered, what admins replayed. Written in
-- batches (one upsert per flush of a process's counters, never a statement per trace).
CREATE TABLE "ledger_counts" (
	"tenant_id" uuid NOT NULL REFERENCES "tenants"("id") ON DELETE CASCADE,
	"service_name" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"stage" text NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "ledger_counts_pkey" PRIMARY KEY ("tenant_id", "service_name", "minute", "stage", "reason")
);
--> statement-breakpoint
-- The cumulative counters each SDK instance last reported (its batches carry them): a retried
-- or reordered batch adds nothing, a new one adds only what grew.
CREATE TABLE "ledger_sdk_instances" (
	"tenant_id" uuid NOT NULL REFERENCES "tenants"("id") ON DELETE CASCADE,
	"service_name" text NOT NULL,
	"instance_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"counts" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_sdk_instances_pkey" PRIMARY KEY ("tenant_id", "service_name", "instance_id")
);
--> statement-breakpoint
-- The reconciliation's latest verdict per tenant (written only by shared/ledger/reconcile.ts).
CREATE TABLE "ledger_checks" (
	"tenant_id" uuid PRIMARY KEY NOT NULL REFERENCES "tenants"("id") ON DELETE CASCADE,
	"checked_at" timestamp with time zone NOT NULL,
	"balanced" boolean NOT NULL,
	"unbalanced_since" timestamp with time zone,
	"details" jsonb NOT NULL
);
