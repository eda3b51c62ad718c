-- Immutable trace rows (issue 28, docs/maturation.md "A trace's state"): a trace row is written
-- once and never updated. What changes after insert lives apart from it:
--   * `pending_traces`: one narrow row per trace from its insert until its MATURED message is
--     published. `matured_at` null = active (the sweep and the batch key find it by
--     `ingested_at`, the first key column); set = matured, publish still owed (crash between the
--     maturation commit and the publish). Deleted once the publish is recorded. No foreign key
--     (a locking lookup per insert): rows whose trace is gone are pruned by the sweep.
--     fillfactor 50: the one update (matured_at) finds room on its page and stays HOT.
--   * the maturation time is `trace_analyses.computed_at`, written in the same transaction and
--     with the same now() as `traces.matured_at` was (so older rows answer the same without a
--     backfill); a trace is matured exactly when it has no active pending row.
-- The old state columns stay for older rows' sake (nothing reads them any more) but lose their
-- defaults and NOT NULL: new rows leave them null. Only traces still pending at upgrade (active,
-- or matured with the publish owed) move here, found through the two indexes that are then
-- dropped: a few rows, not a table walk.
CREATE TABLE "pending_traces" (
	"ingested_at" timestamp with time zone NOT NULL,
	"trace_pk" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"matured_at" timestamp with time zone,
	CONSTRAINT "pending_traces_pkey" PRIMARY KEY ("ingested_at", "trace_pk", "tenant_id")
) WITH (fillfactor = 50);--> statement-breakpoint
INSERT INTO "pending_traces" ("ingested_at", "trace_pk", "tenant_id", "matured_at")
	SELECT "ingested_at", "id", "tenant_id", CASE WHEN "status" = 'matured' THEN "matured_at" END FROM "traces"
	WHERE "status" = 'active' OR "published_count" < "maturation_count"
	ON CONFLICT DO NOTHING;--> statement-breakpoint
DROP INDEX IF EXISTS "traces_active_ingested_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "traces_unpublished_idx";--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "status" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "status" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "maturation_count" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "maturation_count" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "published_count" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "published_count" DROP NOT NULL;
